"""The judge against the scripted model server through the real anthropic SDK: three requests a
criterion, the reply redacted before it is sent, a split vote undecided, a repeated grade served
from the cache (the server's request count proves it), a failure not cached; kappa as
scikit-learn computes it, and ``apg judge calibrate``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from ai_proving_ground.cli import judge as judge_cli
from ai_proving_ground.errors import ApgError
from ai_proving_ground.scorers.judge import Judge, Votes, anthropic_ask, majority, redact
from ai_proving_ground.scorers.kappa import cohen_kappa
from support.model_server import ScriptedModelServer

MODEL = "judge-model-1"
CRITERION = "The reply tells the user where the new listing can be seen."
REPLY = "Using the views-build skill I made the Views display; see /kb/billing."


def judge_at(server: ScriptedModelServer, cache: Path) -> Judge:
    return Judge(MODEL, anthropic_ask(MODEL, server.url, "scripted-dummy-key"), cache)


def judge_requests(server: ScriptedModelServer) -> list[dict[str, object]]:
    return [r.body for r in server.requests if r.path.startswith("/v1/messages")]


def test_three_votes_redacted_then_cached(tmp_path: Path) -> None:
    with ScriptedModelServer([], side_replies=["YES", "yes.", "NO"]) as server:
        judge = judge_at(server, tmp_path)
        first = judge.grade(CRITERION, REPLY, ["views-build", "Views display"])
        assert (first.verdict, first.votes, first.cached) == ("pass", ("yes", "yes", "no"), False)
        sent = judge_requests(server)
        assert len(sent) == 3 and {b["model"] for b in sent} == {MODEL}  # type: ignore[index]
        text = json.dumps(sent)
        assert "views-build" not in text and "Views display" not in text
        assert "Using the [redacted] skill I made the [redacted]; see /kb/billing." in text
        again = judge_at(server, tmp_path).grade(CRITERION, REPLY, ["views-build", "Views display"])
        assert (again.verdict, again.votes, again.cached) == ("pass", first.votes, True)
        assert len(judge_requests(server)) == 3  # no new request
        # Another criterion is another key: three more requests.
        other = judge.grade("The reply names the view's machine name.", REPLY)
        assert len(judge_requests(server)) == 6 and other.cached is False


def test_a_split_vote_is_undecided(tmp_path: Path) -> None:
    with ScriptedModelServer([], side_replies=["YES", "NO", "UNKNOWN"]) as server:
        result = judge_at(server, tmp_path).grade(CRITERION, REPLY)
    assert (result.verdict, result.votes) == ("undecided", ("yes", "no", "unknown"))
    assert majority(["unknown", "unknown", "yes"]) == "undecided"
    assert majority(["no", "unknown", "no"]) == "fail"


def test_a_failed_vote_is_not_cached(tmp_path: Path) -> None:
    # The server's budget: the first two votes answered, the third refused with a 400.
    with (ScriptedModelServer([], side_replies=["YES", "YES"], max_requests=2) as server,
          pytest.raises(ApgError) as caught):
        judge_at(server, tmp_path).grade(CRITERION, REPLY)
    assert caught.value.token == "APG_JUDGE_FAILED" and "vote 3 of 3" in caught.value.message
    assert not (tmp_path / "judge-cache.json").exists()
    with ScriptedModelServer([], side_replies=["NO", "NO", "YES"]) as server:
        result = judge_at(server, tmp_path).grade(CRITERION, REPLY)
        assert (result.verdict, result.cached, len(judge_requests(server))) == ("fail", False, 3)


def test_kept_votes_are_served_by_their_hash_and_a_failed_vote_is_never_kept(
        tmp_path: Path) -> None:
    with ScriptedModelServer([], side_replies=["NO", "NO", "YES"], max_requests=3) as server:
        first = Votes()
        result = Judge(MODEL, anthropic_ask(MODEL, server.url, "k"), tmp_path / "a", first).grade(
            CRITERION, REPLY)
        assert first.used == {result.key: ["no", "no", "yes"]} and len(judge_requests(server)) == 3
        # Another bed (no cache): the kept votes answer; a malformed kept set is asked again.
        again = Votes(kept=first.used)
        served = Judge(MODEL, anthropic_ask(MODEL, server.url, "k"), tmp_path / "b", again).grade(
            CRITERION, REPLY)
        assert (served.verdict, served.cached, again.used) == ("fail", True, first.used)
        assert len(judge_requests(server)) == 3
        broken = Votes(kept={result.key: ["no", "no"]})
        with pytest.raises(ApgError):  # the server's budget is spent: the vote fails
            Judge(MODEL, anthropic_ask(MODEL, server.url, "k"), tmp_path / "c", broken).grade(
                CRITERION, REPLY)
        assert broken.used == {}


def test_redact_whole_words_only() -> None:
    assert redact("drupal-views and views, Views!", ["views"]) == (
        "drupal-[redacted] and [redacted], [redacted]!")
    assert redact("reviews stay", ["views"]) == "reviews stay"


HUMAN = ["pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass",
         "fail", "pass"]
JUDGE = ["pass", "fail", "fail", "fail", "pass", "pass", "pass", "pass", "fail", "fail",
         "fail", "pass"]


def test_kappa_equals_scikit_learn() -> None:
    assert cohen_kappa(HUMAN, JUDGE) == pytest.approx(cohen_kappa_score(HUMAN, JUDGE))
    three = ["a", "b", "c", "a", "a", "c", "b", "b"], ["a", "b", "b", "a", "c", "c", "b", "a"]
    assert cohen_kappa(*three) == pytest.approx(cohen_kappa_score(*three))
    assert math.isnan(cohen_kappa(["pass"] * 3, ["pass"] * 3))


def test_calibrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("item,human,judge\n" + "".join(
        f"r{i},{h},{j}\n" for i, (h, j) in enumerate(zip(HUMAN, JUDGE, strict=True)))
        + "r99,pass,undecided\n", "utf-8")
    assert judge_cli.main(["calibrate", str(labels), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["kappa"] == pytest.approx(cohen_kappa_score(HUMAN, JUDGE), abs=1e-6)
    assert (result["items"], result["undecided"]) == (12, 1)
    assert "APG_JUDGE_KAPPA" in captured.err
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(json.dumps({"human": "yes", "judge": "no"}) + "\n"
                     + json.dumps({"human": "maybe", "judge": "no"}) + "\n", "utf-8")
    assert judge_cli.main(["calibrate", str(jsonl)]) == 2
    err = capsys.readouterr().err
    assert "APG_JUDGE_LABELS_INVALID" in err and f"{jsonl}:2:" in err


def test_calibrate_judges_replies_it_is_given(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [("pass", "The listing is at /kb/billing."), ("fail", "Done."),
            ("pass", "See /kb/billing for it.")]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"criterion": CRITERION, "reply": reply, "human": human})
                              + "\n" for human, reply in rows), "utf-8")
    # Three votes a row: pass (yes, yes, no), fail (no, no, no), undecided (yes, no, unknown).
    votes = ["YES", "YES", "NO", "NO", "NO", "NO", "YES", "NO", "UNKNOWN"]
    with ScriptedModelServer([], side_replies=votes) as server:
        monkeypatch.setenv("AI_PG_JUDGE_MODEL", MODEL)
        monkeypatch.setenv("AI_PG_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AI_PG_JUDGE_API_KEY", "scripted-dummy-key")
        assert judge_cli.main(["calibrate", str(labels), "--json",
                               f"--cache-dir={tmp_path}"]) == 0
        assert len(judge_requests(server)) == 9
    result = json.loads(capsys.readouterr().out)
    assert (result["kappa"], result["items"], result["undecided"]) == (1.0, 2, 1)
    monkeypatch.delenv("AI_PG_JUDGE_MODEL")
    assert judge_cli.main(["calibrate", str(labels)]) == 2
    assert "no judge model" in capsys.readouterr().err
