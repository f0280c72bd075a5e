"""The heartbeat file: whole lines only, phases restored, a waiting rank rewriting its line."""

import os
import re
import threading
import time
import unittest

import support  # noqa: F401  (puts the checkout's package first)
from mlsup_train import files, heartbeat_file
from mlsup_train.heartbeat_file import Heartbeat

# The lines mlsup reads (engine/heartbeat.cpp): the step, then `saving` and/or `waiting <n>`.
LINE = re.compile(r"^\d+( saving)?( waiting \d+)?\n$")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


from support import eventually


class Reader(threading.Thread):
    """Reads a file as fast as it can until stopped; keeps every read that is not a whole line."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.reads, self.torn = path, 0, []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                text = read(self.path)
            except FileNotFoundError:
                continue
            self.reads += 1
            if not LINE.match(text):
                self.torn.append(text)


class HeartbeatTest(unittest.TestCase):
    def setUp(self):
        self.campaign = support.Campaign()
        self.path = self.campaign.env["MLSUP_HEARTBEAT_FILE"]

    def tearDown(self):
        self.campaign.cleanup()

    def test_a_concurrent_reader_never_sees_a_torn_file(self):
        hb = Heartbeat(self.path)
        hb.beat(0)
        reader = Reader(self.path)
        reader.start()
        deadline = time.monotonic() + 1.5
        step = 0
        while time.monotonic() < deadline:
            step += 1
            hb.beat(step)
            if step % 3 == 0:
                with hb.saving():
                    pass
            time.sleep(0)  # let the reader in between writes
        reader.stop.set()
        reader.join()
        print(f"\n  heartbeat: {step} steps written, {reader.reads} concurrent reads, {len(reader.torn)} torn")
        self.assertGreater(reader.reads, 100)
        self.assertEqual(len(reader.torn), 0, f"torn reads, e.g. {reader.torn[:3]}")
        self.assertEqual(read(self.path), f"{step}\n")
        leftovers = [n for n in os.listdir(os.path.dirname(self.path)) if n != os.path.basename(self.path)]
        self.assertEqual(leftovers, [], "no temporary file is left behind")

    def test_temporary_files_are_hidden(self):
        seen = []
        real = files.write_file
        files.write_file = lambda path, data, durable: (seen.append(os.path.basename(path)), real(path, data, durable))
        try:
            Heartbeat(self.path).beat(1)
        finally:
            files.write_file = real
        self.assertEqual(len(seen), 1)
        self.assertTrue(seen[0].startswith("."), f"{seen[0]} would be read as a rank's heartbeat in P.d/")

    def test_saving_writes_on_entering_and_restores_on_leaving(self):
        hb = Heartbeat(self.path)
        hb.beat(7)
        with hb.saving():
            self.assertEqual(read(self.path), "7 saving\n")
            hb.beat(8)
            self.assertEqual(read(self.path), "8 saving\n")
        self.assertEqual(read(self.path), "8\n")

    def test_nested_phases_restore_the_one_before(self):
        hb = Heartbeat(self.path, keepalive_seconds=0.05)
        hb.beat(3)
        with hb.saving():
            with hb.waiting():
                self.assertTrue(eventually(lambda: re.match(r"^3 saving waiting [1-9]\d*\n$", read(self.path))),
                                read(self.path))
            self.assertEqual(hb.line, "3 saving\n")
        self.assertEqual(read(self.path), "3\n")
        with hb.phase("evaluating"):
            self.assertEqual(read(self.path), "3 evaluating\n")
        self.assertEqual(read(self.path), "3\n")

    def test_waiting_rewrites_a_growing_count_and_is_silent_when_short(self):
        hb = Heartbeat(self.path, keepalive_seconds=0.05)
        hb.beat(5)
        with hb.waiting():
            pass
        self.assertEqual(read(self.path), "5\n", "a short wait writes nothing")
        counts = []
        with hb.waiting():
            self.assertTrue(eventually(lambda: "waiting" in read(self.path)))
            for _ in range(4):
                counts.append(int(read(self.path).split()[2]))
                self.assertTrue(eventually(lambda: int(read(self.path).split()[2]) > counts[-1]),
                                f"the line changes while waiting: {counts}")
        self.assertRegex(read(self.path), r"^5 waiting \d+\n$", "leaving a wait is not progress: nothing is written")
        hb.beat(6)
        self.assertEqual(read(self.path), "6\n")

    def test_nothing_is_written_before_the_first_step_or_when_disabled(self):
        hb = Heartbeat(self.path)
        with hb.saving():
            pass
        self.assertFalse(os.path.exists(self.path))
        other = Heartbeat(self.path, enabled=False)
        other.beat(1)
        self.assertFalse(os.path.exists(self.path))
        Heartbeat("").beat(1)  # no heartbeat file handed over: nothing to do

    def test_a_missing_folder_is_made_and_an_unwritable_one_is_told_not_raised(self):
        path = os.path.join(self.campaign.root, "new", "hb")
        Heartbeat(path).beat(2)
        self.assertEqual(read(path), "2\n")
        blocked = os.path.join(self.campaign.root, "file")
        with open(blocked, "w"):
            pass
        hb = Heartbeat(os.path.join(blocked, "hb"))
        hb.beat(1)  # a file where the folder should be: told on stderr, the training goes on
        self.assertEqual(hb.writes, 0)

    def test_phase_names_are_one_word(self):
        hb = Heartbeat(self.path)
        for bad in ("", "two words", "9lives"):
            with self.assertRaises(ValueError):
                with hb.phase(bad):
                    pass

    def test_render(self):
        self.assertEqual(heartbeat_file.render(4, []), "4\n")
        self.assertEqual(heartbeat_file.render(4, [["saving", 0], ["waiting", 2]]), "4 saving waiting 2\n")


if __name__ == "__main__":
    unittest.main()
