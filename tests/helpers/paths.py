"""Where the tests find their inputs: the fixtures in the repository and the shared reference material beside it."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"
REFERENCE = ROOT.parent / "shared" / "reference"
