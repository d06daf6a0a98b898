"""python3 -m unittest discover bench/scene/test: the workspaces' choice of trees."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workspaces import select  # noqa: E402


class Select(unittest.TestCase):
    counts = {"js/a": 600, "js/b": 500, "py/c": 300, "rust/d": 120, "rust/e": 5}

    def total(self, chosen):
        return sum(n for *_, n in chosen)

    def test_largest_first_within_two_percent(self):
        chosen = select(self.counts, 1000)
        self.assertEqual([name for _, name, _ in chosen], ["js/a", "py/c", "rust/d"])
        self.assertTrue(980 <= self.total(chosen) <= 1020)

    def test_copies_past_the_corpus(self):
        chosen = select(self.counts, 4000)
        self.assertTrue(3920 <= self.total(chosen) <= 4080, self.total(chosen))
        self.assertEqual({copy for copy, _, _ in chosen}, {1, 2, 3})
        # No tree twice in one copy.
        self.assertEqual(len(chosen), len({(copy, name) for copy, name, _ in chosen}))

    def test_deterministic(self):
        self.assertEqual(select(self.counts, 2500), select(dict(reversed(self.counts.items())), 2500))

    def test_empty_corpus_is_an_error(self):
        with self.assertRaises(SystemExit):
            select({}, 1000)


if __name__ == "__main__":
    unittest.main()
