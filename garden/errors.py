"""Errors whose message is meant for the person who caused them."""


class UserFacingError(ValueError):
    """A request that cannot be served as given; `message` is shown to the user as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
