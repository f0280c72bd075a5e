"""The contract's environment, the switches, the pre-timeout signal, fencing and memory, on one rank."""

import os
import signal
import unittest

import support
import mlsup_train
from mlsup_train import contract, decide, memory


class ContractTest(unittest.TestCase):
    def test_reads_every_value_and_tells_a_bad_number(self):
        campaign = support.Campaign(attempt=3)
        try:
            c = contract.from_environment(campaign.env)
            self.assertEqual((c.run, c.attempt, c.no_retry_exit_code), ("test", 3, 78))
            self.assertEqual(c.fence_file, os.path.join(campaign.state_dir, "fenced", "3"))
            self.assertTrue(c.supervised)
            self.assertFalse(c.heartbeat_per_task)
            with self.assertRaisesRegex(ValueError, "MLSUP_ATTEMPT='x'"):
                contract.from_environment(dict(campaign.env, MLSUP_ATTEMPT="x"))
        finally:
            campaign.cleanup()

    def test_outside_mlsup_everything_is_empty(self):
        c = contract.from_environment({})
        self.assertFalse(c.supervised)
        self.assertEqual(c.fence_file, "")
        self.assertEqual(c.no_retry_exit_code, contract.DEFAULT_NO_RETRY_EXIT_CODE)

    def test_the_plugins_per_task_file(self):
        campaign = support.Campaign(per_task=True)
        try:
            self.assertTrue(contract.from_environment(campaign.rank_env(1)).heartbeat_per_task)
        finally:
            campaign.cleanup()


class DecideTest(unittest.TestCase):
    def test_the_table(self):
        cases = {
            (): (False, False), ("save",): (True, False), ("kill",): (True, True), ("signal",): (True, True),
            ("memory",): (True, True), ("fenced",): (False, True), ("fenced", "save", "kill"): (False, True),
        }
        for raised, (save, stop) in cases.items():
            d = decide.decide(decide.vector(set(raised), 0))
            self.assertEqual((d.save, d.stop), (save, stop), raised)
            self.assertEqual(set(d.reasons), set(raised))

    def test_switches_count_on_rank_0_only(self):
        self.assertEqual(decide.decide(decide.vector({"kill", "save"}, 1)), decide.Decision())
        self.assertTrue(decide.decide(decide.vector({"signal"}, 1)).stop)


class JobTest(unittest.TestCase):
    def setUp(self):
        self.campaign = support.Campaign()
        self.previous = signal.getsignal(signal.SIGUSR1)

    def tearDown(self):
        signal.signal(signal.SIGUSR1, self.previous)
        self.campaign.cleanup()

    def job(self, env=None, **options):
        return mlsup_train.Job(environ=env or self.campaign.rank_env(0), **options)

    def test_nothing_raised_nothing_done(self):
        job = self.job()
        self.assertFalse(job.should_save())
        self.assertFalse(job.should_stop())
        self.assertIsNone(job.resume_path())

    def test_resume_path(self):
        job = self.job(dict(self.campaign.env, MLSUP_RESUME_FROM="/ckpt/step_20"))
        self.assertEqual(job.resume_path(), "/ckpt/step_20")

    def test_save_switch_saves_goes_on_and_is_deleted_after_the_save(self):
        job = self.job()
        switch = self.campaign.touch("MLSUP_SAVE_SWITCH")
        self.assertTrue(job.should_save())
        self.assertFalse(job.should_stop())
        with job.checkpoint(5) as ckpt:
            self.assertTrue(os.path.exists(switch), "the switch stays until the save is in place")
            open(os.path.join(ckpt.dir, "weights"), "w").close()
        self.assertTrue(ckpt.committed)
        self.assertFalse(os.path.exists(switch))
        self.assertFalse(job.should_save())

    def test_kill_switch_saves_and_stops_and_stays(self):
        job = self.job()
        switch = self.campaign.touch("MLSUP_KILL_SWITCH")
        self.assertEqual((job.should_save(), job.should_stop()), (True, True))
        self.assertEqual(job.stop_reasons, ("kill",))
        with job.checkpoint(5):
            pass
        self.assertTrue(os.path.exists(switch), "mlsup reads the kill switch after the job ends")

    def test_one_decision_answers_both_questions(self):
        job = self.job()
        self.assertFalse(job.should_save())
        self.campaign.touch("MLSUP_KILL_SWITCH")
        self.assertFalse(job.should_stop(), "a stop without the save asked for is never decided")
        self.assertTrue(job.should_stop(), "asking again takes a new decision")
        self.assertTrue(job.should_save())

    def test_the_pre_timeout_signal_is_a_flag(self):
        job = self.job()
        os.kill(os.getpid(), signal.SIGUSR1)  # the default action would end this process
        self.assertEqual((job.should_save(), job.should_stop()), (True, True))
        self.assertEqual(job.stop_reasons, ("signal",))
        self.assertTrue(job.should_stop(), "the signal stays caught")

    def test_the_signal_the_config_names_is_caught(self):
        previous = signal.getsignal(signal.SIGUSR2)
        try:
            job = self.job(dict(self.campaign.env, MLSUP_SIGNAL="USR2", MLSUP_SIGNAL_LEAD="90"))
            self.assertEqual(job.contract.signal_lead, 90)
            os.kill(os.getpid(), signal.SIGUSR2)  # the default action would end this process
            self.assertEqual((job.should_save(), job.should_stop()), (True, True))
            self.assertEqual(job.stop_reasons, ("signal",))
        finally:
            signal.signal(signal.SIGUSR2, previous)

    def test_an_earlier_handler_still_runs(self):
        seen = []
        signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
        self.job()
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertEqual(seen, [signal.SIGUSR1])

    def test_another_signal(self):
        previous = signal.getsignal(signal.SIGUSR2)
        try:
            job = self.job(signals=(signal.SIGUSR2,))
            os.kill(os.getpid(), signal.SIGUSR2)
            self.assertTrue(job.should_stop())
        finally:
            signal.signal(signal.SIGUSR2, previous)

    def test_fenced_stops_without_a_save_and_drops_a_save_in_progress(self):
        job = self.job()
        with job.checkpoint(5) as ckpt:
            self.campaign.fence()
        self.assertFalse(ckpt.committed)
        self.assertEqual(os.listdir(self.campaign.checkpoint_dir), [], "neither the folder nor its temporary one")
        self.campaign.touch("MLSUP_SAVE_SWITCH")
        self.assertEqual((job.should_save(), job.should_stop()), (False, True))
        self.assertEqual(job.stop_reasons, ("fenced", "save"))

    def test_another_attempts_fence_is_not_ours(self):
        job = self.job(dict(self.campaign.env, MLSUP_ATTEMPT="2"))
        self.campaign.fence()  # attempt 1's
        self.assertFalse(job.should_stop())

    def test_memory_threshold_is_off_by_default_and_stops_over_it(self):
        self.assertEqual(memory.Thresholds(), self.job().memory)
        over = self.job(memory_limit=1024)  # any Python process holds more than 1 KiB
        self.assertEqual((over.should_save(), over.should_stop()), (True, True))
        self.assertEqual(over.stop_reasons, ("memory",))
        self.assertFalse(self.job(memory_limit="1T").should_stop())

    def test_no_retry_exits_with_the_contracts_code(self):
        with self.assertRaises(SystemExit) as e:
            self.job(dict(self.campaign.env, MLSUP_NO_RETRY_EXIT_CODE="91")).no_retry()
        self.assertEqual(e.exception.code, 91)

    def test_every_rank_writes_its_own_file_without_the_plugin_too(self):
        for rank, node in ((0, "n1"), (1, "gpu-2.cluster"), (2, "odd name")):
            self.job(self.campaign.rank_env(rank, node=node)).heartbeat(4)
        path = self.campaign.env["MLSUP_HEARTBEAT_FILE"]
        self.assertFalse(os.path.exists(path), "mlsup's own file is left to the plugin's batch script")
        self.assertEqual(sorted(os.listdir(path + ".d")), ["gpu-2.cluster.1", "n1.0", "odd_name.2"])
        with open(self.campaign.beat_file(1, "gpu-2.cluster")) as f:
            self.assertEqual(f.read(), "4\n")

    def test_heartbeat_of_rank_0_only_when_asked(self):
        self.job(self.campaign.rank_env(1), per_rank_heartbeats=False).heartbeat(4)
        path = self.campaign.env["MLSUP_HEARTBEAT_FILE"]
        self.assertFalse(os.path.exists(path), "every rank shares the path: rank 0 writes it")
        self.job(self.campaign.rank_env(0), per_rank_heartbeats=False).heartbeat(4)
        with open(path) as f:
            self.assertEqual(f.read(), "4\n")
        self.assertFalse(os.path.exists(path + ".d"))

    def test_file_names_as_the_plugin_writes_them(self):
        self.assertEqual([contract.file_name(n) for n in ("n1", "", ".hidden", "a/b", "é")], ["n1", "_", "_.hidden", "a_b", "_"])

    def test_every_rank_writes_its_own_file_with_the_plugin(self):
        campaign = support.Campaign(per_task=True)
        try:
            for rank in (0, 1):
                mlsup_train.Job(environ=campaign.rank_env(rank, node=f"n{rank}")).heartbeat(9)
            folder = campaign.env["MLSUP_ATTEMPT_HEARTBEAT_FILE"] + ".d"
            self.assertEqual(sorted(os.listdir(folder)), ["n0.0", "n1.1"])
        finally:
            campaign.cleanup()


class SizeTest(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(memory.parse_size("40G"), 40 << 30)
        self.assertEqual(memory.parse_size("512MiB"), 512 << 20)
        self.assertEqual(memory.parse_size("1.5k"), 1536)
        self.assertEqual(memory.parse_size(1000), 1000)
        self.assertIsNone(memory.parse_size(None))
        for bad in ("lots", "-1G", "G"):
            with self.assertRaises(ValueError):
                memory.parse_size(bad)

    def test_the_readings(self):
        self.assertGreater(memory.rss_bytes(), 1 << 20)
        self.assertGreater(memory.available_bytes(), 0)
        low = memory.Thresholds(available_floor=1 << 60)
        self.assertIn("available memory", low.exceeded())


if __name__ == "__main__":
    unittest.main()
