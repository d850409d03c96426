"""The README's quickstarts run as written, and it opens with the two set-up commands."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
QUICKSTARTS = re.findall(r"## Quickstart[^\n]*\n\n```python\n(.*?)```", README.read_text(), re.S)


def test_there_are_quickstarts():
    assert len(QUICKSTARTS) >= 2


@pytest.mark.parametrize("index", range(len(QUICKSTARTS)))
def test_quickstart_runs(index, capsys):
    namespace = {}
    exec(compile(QUICKSTARTS[index], f"{README}:quickstart{index}", "exec"), namespace)


def test_readme_opens_with_the_two_commands():
    text = README.read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert 'pip install -e ".[test]"' in block and "python -m dpsco_core demo" in block
    assert "python -m pytest" in block
