"""The one error type of visattn: a bad input, said in English for notebook users and coded for the
app.

Every boundary check raises :class:`InputError`. Its ``code`` is stable (the app translates it as
``errors.<code>`` in ``ui/locales/<lang>/errors.json``) and its ``params`` fill that translation's
placeholders, so the same mistake reads in the page's language. ``str(error)`` stays the English
message. Codes are string literals at the raise site: a test reads them from the source and checks
each has a translation in every language whose placeholders are among the params given."""

from __future__ import annotations

from typing import Any


class InputError(ValueError):
    """A ValueError with a stable ``code`` and ``params`` (display-ready numbers and short
    strings)."""

    def __init__(self, code: str, message: str, **params: Any):
        super().__init__(message)
        self.code = code
        self.params = params

    def __reduce__(
        self,
        # keep code and params through pickling (st.cache_data pickles results, not errors, but be
        # safe)
    ):
        return (_rebuild, (self.code, str(self), self.params))


def _rebuild(code: str, message: str, params: dict) -> InputError:
    return InputError(code, message, **params)
