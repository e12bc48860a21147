"""The PDFs of the test vault `gardens/obsidian-pdfs`, as text: the vault holds them as written by
`python -m tests.garden.vault_pdfs` (pdfmaker), so the vault can also be imported by hand."""

from __future__ import annotations

from pathlib import Path

from tests.garden.pdfmaker import SCANNED, pdf_write

VAULT = Path(__file__).resolve().parent / "gardens" / "obsidian-pdfs"
STUDY_TITLE = "Winter losses and varroa in small apiaries"
STUDY = [
    [
        "Winter losses and varroa in small apiaries",
        "This study followed 212 colonies kept by 38 beekeepers in small apiaries of one to twelve hives "
        "between October 2023 and April 2024. Each beekeeper counted the mites that fell onto a sticky board "
        "over three days in late September and again in early March.",
        "Half of the beekeepers treated their colonies with oxalic acid in the first week of December, when "
        "the colonies have no brood; the others did not treat over the winter.",
    ],
    [
        "Results",
        "Colonies treated with oxalic acid in December lost nine percent over the winter, against thirty-one "
        "percent of the untreated colonies in the same apiaries. The difference held in every one of the four "
        "counties in the study.",
        "Colonies that dropped more than ten mites a day in September were three times as likely to die over "
        "the winter as those that dropped fewer than two.",
    ],
    [
        "Discussion",
        "A single treatment in a broodless period is cheap and quick. The beekeepers who skipped it most often "
        "named cold weather in December as the reason; a mild week in late November works as well.",
    ],
]
MANUAL = [
    [
        "Honey extractor: care and use",
        "Uncap the frames over the tray and load them in opposite pairs, so that the basket is balanced before "
        "it is turned.",
    ],
    [
        "Spinning",
        "Run the extractor at no more than 300 revolutions per minute for the first two minutes, then turn the "
        "frames and spin the other side at full speed. A frame spun too fast while it is full breaks its comb.",
        "Wash the drum with warm water only: detergent taints the next honey.",
    ],
]
# Private by .gardenignore (Receipts/): its words must be nowhere in the garden.
RECEIPT = [["ZEPHYRPDF order 7719: two mated queens, paid by card ending 4471."]]


def vault_pdfs_write(folder: Path = VAULT) -> None:
    pdf_write(folder / "Papers" / "Varroa study.pdf", STUDY, title=STUDY_TITLE)
    pdf_write(folder / "Manuals" / "Honey extractor manual.pdf", MANUAL)  # no title: named by its file
    pdf_write(folder / "Scans" / "Swarm letter 1987.pdf", [SCANNED, SCANNED])  # a scan: no text layer
    pdf_write(folder / "Receipts" / "Queen order.pdf", RECEIPT, title="Queen order")
    pdf_write(folder / ".trash" / "Old order.pdf", RECEIPT)  # Obsidian's deleted files: private by place


if __name__ == "__main__":
    vault_pdfs_write()
