"""The garden's models, in one file a stage: the content (articles, revisions, passages, images, links,
audiences), its vocabulary (topics, themes and their names), the refusal gate's calibration, the syncs, and
asking (conversations, questions, retrievals, answers and their sources).

Each model and the choices of its fields are imported here, so that Django's app registry finds them and
`from garden.models import Answer` reads as for any app; what else a module holds is imported from it.
"""

from garden.models.asking import (
    Answer,
    AnswerSource,
    Conversation,
    Generator,
    Question,
    Retrieval,
    RetrievedArticle,
    Risk,
    SearchRule,
)
from garden.models.calibration import CalibrationSource, RetrievalCalibration
from garden.models.content import (
    Article,
    ArticleRevision,
    Audience,
    Image,
    Link,
    Passage,
    TextSearchConfigField,
)
from garden.models.syncs import Sync
from garden.models.vocabulary import Name, Theme, Topic

__all__ = [
    "Answer",
    "AnswerSource",
    "Article",
    "ArticleRevision",
    "Audience",
    "CalibrationSource",
    "Conversation",
    "Generator",
    "Image",
    "Link",
    "Name",
    "Passage",
    "Question",
    "Retrieval",
    "RetrievalCalibration",
    "RetrievedArticle",
    "Risk",
    "SearchRule",
    "Sync",
    "TextSearchConfigField",  # migration 0027 names the field by this path
    "Theme",
    "Topic",
]
