"""The images a note shows: found in its garden (a path from the note, else by file name anywhere, the
shortest path first, as Obsidian finds them), stored once each, and named on the note's revision."""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import posixpath
from collections import defaultdict
from pathlib import Path

from garden.formats.note import ParsedArticle
from garden.models import Image
from garden.walk import image_files
from text.markup import written_key

logger = logging.getLogger(__name__)

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # larger images are left out (a named placeholder shows where they were)
IMAGE_OUTSIDE = "%s shows the image %s, which is outside the garden; it is left out"
IMAGE_UNREADABLE = "%s shows the image %s, which cannot be read (%s); it is left out"


class ImageFinder:
    def __init__(self, folder: Path) -> None:
        self.root = folder.resolve() if folder.is_dir() else folder.resolve().parent
        # Paths as the garden's walk gives them (inside the folder, never a link out of it), below its root.
        self.by_name: dict[str, list[tuple[str, Path]]] = defaultdict(list)
        for path in image_files(folder):
            relative = path.relative_to(folder)
            self.by_name[path.name.lower()].append((relative.as_posix().lower(), self.root / relative))
        for paths in self.by_name.values():
            paths.sort(key=lambda found: (found[0].count("/"), found[0]))

    def find(self, written: str, *, from_note: bool, note_path: str) -> Path | None:
        """The garden's image a note names; None when it has none of that name, or the path leaves the garden."""
        if from_note:
            relative = posixpath.normpath(posixpath.join(posixpath.dirname(note_path), written_key(written)))
            if relative == ".." or relative.startswith(("../", "/")):
                logger.warning(IMAGE_OUTSIDE, note_path, written)
                return None
            wanted = {relative, posixpath.normpath(written_key(written))}
            for place, path in self.by_name.get(posixpath.basename(relative), []):
                if place in wanted:
                    return path
        candidates = self.by_name.get(posixpath.basename(written_key(written)), [])
        return candidates[0][1] if candidates else None

    def store(self, parsed: ParsedArticle) -> dict[str, str]:
        """The note's images as written (lower case) -> the stored Image's sha256; missing ones are left out."""
        found: dict[str, str] = {}
        for written, from_note in parsed.images:
            path = self.find(written, from_note=from_note, note_path=(parsed.relative_path or "").lower())
            if path is None:
                continue
            try:
                if path.stat().st_size > MAX_IMAGE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError as error:
                logger.warning(IMAGE_UNREADABLE, parsed.relative_path, written, error.strerror or error)
                continue
            digest = hashlib.sha256(data).hexdigest()
            Image.objects.get_or_create(
                sha256=digest,
                defaults={
                    "name": path.name[:300],
                    "content_type": mimetypes.guess_type(path.name)[0] or "application/octet-stream",
                    "data": data,
                },
            )
            found[written_key(written)] = digest
        return found
