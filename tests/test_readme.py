"""The README's quickstart runs as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_quickstart_runs(capsys):
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace = {}
    exec(compile(code, str(README), "exec"), namespace)
    assert namespace["i"] in (0, 1, 2)
    assert namespace["s"] > 0 and namespace["z"] > 0


def test_readme_opens_with_the_two_commands():
    text = README.read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert 'pip install -e ".[test]"' in block and "python -m dpsco_core demo" in block
    assert "python -m pytest" in block
