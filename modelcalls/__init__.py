"""One call to a model (Claude, or one served over the OpenAI API), as every package sees it: the reply it gave
(`ModelReply`), what it was billed (`Usage`), and the budget it is booked against before it is made and settled
at once it was billed (`Budget`, `book`).

The engine (`claimcheck`) and the clients (`providers`) may not import each other, and both speak of these: so
they live here, once, in plain Python that imports nothing of the project and no Django.
"""

from modelcalls.budget import Booking, Budget, book
from modelcalls.replies import NO_USAGE, ModelReply, Usage

__all__ = ["NO_USAGE", "Booking", "Budget", "ModelReply", "Usage", "book"]
