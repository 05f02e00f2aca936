"""End to end: plans (S9) with the real Herald binary through real Prosody and ejabberd.

The fake LLM (tests/fakes/fake_llm_main) answers a planning request with two plans — the
first with two independent steps ("Look up A", "Look up B", 1 s each) and a third that needs
both — answers each step with "result of <step>", and the final request with "Plan done:"
and the steps' results. Its request log says when each request arrived, which is how the
test sees the two independent steps run at the same time.

    tests/e2e/run bazel-bin/component/herald test_plans
"""

import os
import time
import unittest

from memory_files import read_history, user_folder
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, FILES, _ConversationBase

STEP_SECONDS = 1.0  # how long the fake takes for "Look up A" and "Look up B"


class _PlanTests(_ConversationBase):

    def test_a_plan_is_proposed_chosen_by_number_and_its_independent_steps_run_together(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)

        proposal = self.ask(alice, "/plan compare A and B")
        self.assertTrue(proposal.startswith("Here are 2 plans. Reply with its number"),
                        f"{proposal!r}\n{self.diagnosis()}")
        self.assertIn("1. Look both up, then compare — confidence 90%, ~800 tokens", proposal)
        self.assertIn("   3) Compare A and B (after 1, 2)", proposal)
        self.assertIn("2. Guess — confidence 20%", proposal)

        alice.send(self.herald, "1")
        replies = alice.replies_from(self.herald, within=ANSWER, count=8)
        self.assertEqual(len(replies), 8, f"{replies}\n{self.diagnosis()}")
        self.assertEqual(replies[0], "Running plan 1: Look both up, then compare (3 steps).")

        def index(prefix):
            found = [i for i, reply in enumerate(replies) if reply.startswith(prefix)]
            self.assertEqual(len(found), 1, f"{prefix!r} in {replies}")
            return found[0]

        # Both lookups start before either ends; the comparison waits for both.
        self.assertLess(index("Step 2/3 started: Look up B"), index("Step 1/3 done"))
        self.assertLess(index("Step 1/3 done"), index("Step 3/3 started: Compare A and B"))
        self.assertLess(index("Step 2/3 done"), index("Step 3/3 started"))
        self.assertIn("result of Look up A", replies[index("Step 1/3 done")])
        answer = replies[-1]
        self.assertTrue(answer.startswith("Plan done:"), answer)
        for result in ("result of Look up A", "result of Look up B", "result of Compare A and B"):
            self.assertIn(result, answer)

        # The fake's log: the two independent steps arrived together, not one after the other.
        steps = {request["last_user_text"].split("): ", 1)[1].split("\n")[0]: request
                 for request in llm.requests() if request.get("kind") == "step"}
        self.assertEqual(set(steps), {"Look up A", "Look up B", "Compare A and B"}, steps)
        a, b = steps["Look up A"]["received_at"], steps["Look up B"]["received_at"]
        self.assertLess(abs(a - b), STEP_SECONDS / 2,
                        f"the independent steps did not overlap: {a} and {b}")
        self.assertGreaterEqual(steps["Compare A and B"]["received_at"] - max(a, b),
                                STEP_SECONDS * 0.9, "the comparison did not wait for both")

        # The plan and its outcome are in alice's history.
        history = os.path.join(user_folder(agent.memory_dir, "alice@localhost"), "history.md")
        notes = []
        for _ in range(int(FILES / 0.1)):
            notes = [e.text for e in read_history(history) if e.role == "note"]
            if any(n.startswith("The plan is done.") for n in notes):
                break
            time.sleep(0.1)
        self.assertTrue(any(n.startswith("Plan 1 chosen by alice@localhost") for n in notes),
                        notes)
        self.assertTrue(any(n.startswith("The plan is done.") for n in notes), notes)


class ProsodyPlanTest(_PlanTests, unittest.TestCase):
    server_class = Prosody


class EjabberdPlanTest(_PlanTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
