"""Where the tests find their inputs: the fixtures in the repository and the shared reference material beside it;
and how a child Python process finds this checkout."""

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"
REFERENCE = ROOT.parent / "shared" / "reference"


def ascii_locale_env() -> dict[str, str]:
    """The environment of a child Python that imports this checkout under the C locale, with Python's UTF-8 mode and
    locale coercion off: a file opened without an encoding is then read and written as ASCII."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
