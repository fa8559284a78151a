"""The README's ten lines serve the model as they say."""
import contextlib
import io
import os
import re
import unittest

from support import MODEL, needs_model

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "README.md")


@needs_model
class ReadmeTest(unittest.TestCase):
    def test_the_serving_example_runs(self):
        with open(README, encoding="utf-8") as file:
            code = re.search(r"```python\n(.*?)```", file.read(), re.S).group(1)
        self.assertLessEqual(len(code.strip().splitlines()), 13)
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(code.replace('"mlp.popef"', repr(MODEL)), {})
        self.assertIn("DataDesc(name='image'", output.getvalue())
        self.assertIn("INVALID_ARGUMENT input 'image': expected dtype float32, got float64",
                      output.getvalue())


if __name__ == "__main__":
    unittest.main()
