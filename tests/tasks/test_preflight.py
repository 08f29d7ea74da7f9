"""The credential preflight: one test per credential shape, what passes, and the refusal.

Findings are (name, source, line, kind); the source is relative to the app root.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.preflight import inspect_bed, preflight

Run = Callable[..., Any]  # the conftest ``apg`` fixture
SECRET = "sk-ant-PLANTED-0123456789abcdef"

CLAUDE_ADDON = """\
services:
  web:
    volumes:
      - ~/.claude:/home/.claude
"""



@pytest.fixture
def approot(bed: Path) -> Path:
    (bed / ".ddev").mkdir()  # apg run refuses a directory with no site in it
    return bed


def ddev_file(approot: Path, name: str, text: str) -> Path:
    path = approot / ".ddev" / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def compose_volume(approot: Path, volume: str) -> list[tuple[str, str, int | None, str]]:
    """Findings for one short-syntax volume on the web service (the volume sits on line 4)."""
    ddev_file(approot, "docker-compose.extra.yaml",
              f"services:\n  web:\n    volumes:\n      - \"{volume}\"\n")
    return found(approot)


def found(approot: Path) -> list[tuple[str, str, int | None, str]]:
    return [(f.name, f.source, f.line, f.kind) for f in inspect_bed(approot)]


COMPOSE = ".ddev/docker-compose.extra.yaml"


# ---------------------------------------------------------------------------- volume sources


def test_tilde_home_volume(approot: Path) -> None:
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    assert found(approot) == [("~/.claude", ".ddev/docker-compose.claude.yaml", 4, "home_path")]


def test_dollar_home_volume(approot: Path) -> None:
    assert compose_volume(approot, "$HOME/.ssh:/root/.ssh") == \
        [("$HOME/.ssh", COMPOSE, 4, "home_path")]


def test_braced_home_volume(approot: Path) -> None:
    assert compose_volume(approot, "${HOME}/.aws:/root/.aws:ro") == \
        [("${HOME}/.aws", COMPOSE, 4, "home_path")]


def test_slash_home_volume(approot: Path) -> None:
    assert compose_volume(approot, "/home/alice/.config/gh:/x") == \
        [("/home/alice/.config/gh", COMPOSE, 4, "home_path")]


def test_root_home_volume(approot: Path) -> None:
    assert compose_volume(approot, "/root/.codex:/x") == [("/root/.codex", COMPOSE, 4, "home_path")]


def test_absolute_path_outside_project(approot: Path) -> None:
    assert compose_volume(approot, "/etc/ssl/private:/x") == \
        [("/etc/ssl/private", COMPOSE, 4, "outside_project")]


def test_relative_path_escaping_project(approot: Path) -> None:
    assert compose_volume(approot, "../../shared:/x") == \
        [("../../shared", COMPOSE, 4, "outside_project")]


def test_unresolved_variable_volume(approot: Path) -> None:
    assert compose_volume(approot, "${CONFIG_ROOT}/agent:/x") == \
        [("${CONFIG_ROOT}/agent", COMPOSE, 4, "unresolved_variable")]


def test_variable_with_default_is_unresolved(approot: Path) -> None:
    # The colon inside ${...} is not the src:dst separator.
    assert compose_volume(approot, "${XDG_CONFIG_HOME:-/tmp}/gh:/x") == \
        [("${XDG_CONFIG_HOME:-/tmp}/gh", COMPOSE, 4, "unresolved_variable")]


def test_docker_socket_under_var_run(approot: Path) -> None:
    assert compose_volume(approot, "/var/run/docker.sock:/var/run/docker.sock") == \
        [("/var/run/docker.sock", COMPOSE, 4, "docker_socket")]


def test_docker_socket_under_run(approot: Path) -> None:
    assert compose_volume(approot, "/run/docker.sock:/var/run/docker.sock") == \
        [("/run/docker.sock", COMPOSE, 4, "docker_socket")]


def test_long_syntax_bind_volume(approot: Path) -> None:
    ddev_file(approot, "docker-compose.long.yaml", """\
        services:
          web:
            volumes:
              - type: bind
                source: ~/.claude
                target: /home/.claude
        """)
    assert found(approot) == [("~/.claude", ".ddev/docker-compose.long.yaml", 4, "home_path")]


def test_named_volume_bound_to_a_host_device(approot: Path) -> None:
    ddev_file(approot, "docker-compose.named.yaml", """\
        services:
          web:
            volumes:
              - creds:/home/.claude
        volumes:
          creds:
            driver_opts: {type: none, o: bind, device: /home/alice/.claude}
        """)
    assert found(approot) == \
        [("/home/alice/.claude", ".ddev/docker-compose.named.yaml", 7, "home_path")]


def test_compose_secret_read_from_home(approot: Path) -> None:
    ddev_file(approot, "docker-compose.secrets.yaml", """\
        secrets:
          deploy_key:
            file: ~/.ssh/id_ed25519
        """)
    assert found(approot) == \
        [("~/.ssh/id_ed25519", ".ddev/docker-compose.secrets.yaml", 3, "home_path")]


def test_env_file_in_home(approot: Path) -> None:
    ddev_file(approot, "docker-compose.envfile.yaml", """\
        services:
          web:
            env_file: ~/.agent.env
        """)
    assert found(approot) == [("~/.agent.env", ".ddev/docker-compose.envfile.yaml", 3, "home_path")]


def test_env_file_inside_project_is_read_too(approot: Path) -> None:
    ddev_file(approot, "docker-compose.envfile.yaml", """\
        services:
          web:
            env_file:
              - ../agent.env
        """)
    (approot / "agent.env").write_text(f"# keys\nOPENAI_API_KEY={SECRET}\n", encoding="utf-8")
    assert found(approot) == [("OPENAI_API_KEY", "agent.env", 2, "credential_env")]


def test_paths_inside_the_project_pass(approot: Path) -> None:
    ddev_file(approot, "config.yaml", "name: bed\ndocroot: web\n")
    ddev_file(approot, "docker-compose.fine.yaml", """\
        services:
          web:
            volumes:
              - ../:/var/www/html
              - ./mysql:/etc/mysql/conf.d
              - ${DDEV_APPROOT}/private:/private
              - $DDEV_APPROOT/${DDEV_DOCROOT}/files:/files
              - ddev-global-cache:/mnt/ddev-global-cache
              - /var/lib/anonymous
              - type: volume
                source: named
                target: /named
            environment:
              - VIRTUAL_HOST=$DDEV_HOSTNAME
              - TZ=UTC
        """)
    assert found(approot) == []


# ---------------------------------------------------------------------------- environment names


def test_api_key_name_in_env_file(approot: Path) -> None:
    ddev_file(approot, ".env", f"# service\nMY_SERVICE_API_KEY={SECRET}\n")
    assert found(approot) == [("MY_SERVICE_API_KEY", ".ddev/.env", 2, "credential_env")]


def test_token_name_in_env_dot_file(approot: Path) -> None:
    ddev_file(approot, ".env.local", f"SLACK_BOT_TOKEN='{SECRET}'\n")
    assert found(approot) == [("SLACK_BOT_TOKEN", ".ddev/.env.local", 1, "credential_env")]


def test_secret_name_in_compose_environment_list(approot: Path) -> None:
    ddev_file(approot, "docker-compose.env.yaml", f"""\
        services:
          web:
            environment:
              - TZ=UTC
              - STRIPE_SECRET={SECRET}
        """)
    assert found(approot) == \
        [("STRIPE_SECRET", ".ddev/docker-compose.env.yaml", 5, "credential_env")]


def test_password_name_in_compose_environment_mapping(approot: Path) -> None:
    ddev_file(approot, "docker-compose.env.yaml", f"""\
        services:
          db:
            environment:
              SMTP_PASSWORD_FILE: {SECRET}
        """)
    assert found(approot) == \
        [("SMTP_PASSWORD_FILE", ".ddev/docker-compose.env.yaml", 4, "credential_env")]


def test_anthropic_name_in_web_environment(approot: Path) -> None:
    ddev_file(approot, "config.yaml", f"""\
        name: bed
        web_environment:
          - AI_PG_FIXTURE_PATH=my-fixtures
          - ANTHROPIC_BASE_URL={SECRET}
        """)
    assert found(approot) == [("ANTHROPIC_BASE_URL", ".ddev/config.yaml", 4, "credential_env")]


def test_openai_name_exported_in_env_file(approot: Path) -> None:
    ddev_file(approot, ".env", f"export OPENAI_ORG_ID={SECRET}\n")
    assert found(approot) == [("OPENAI_ORG_ID", ".ddev/.env", 1, "credential_env")]


def test_aws_name_in_config_local_web_environment(approot: Path) -> None:
    ddev_file(approot, "config.local.yaml", "web_environment: [AWS_PROFILE=default]\n")
    assert found(approot) == [("AWS_PROFILE", ".ddev/config.local.yaml", 1, "credential_env")]


def test_github_token_in_env_web_file(approot: Path) -> None:
    ddev_file(approot, ".env.web", f"GITHUB_TOKEN={SECRET}\n")
    assert found(approot) == [("GITHUB_TOKEN", ".ddev/.env.web", 1, "credential_env")]


def test_gh_token_passed_through_from_the_host(approot: Path) -> None:
    ddev_file(approot, "docker-compose.env.yaml", """\
        services:
          web:
            environment:
              GH_TOKEN:
        """)
    assert found(approot) == [("GH_TOKEN", ".ddev/docker-compose.env.yaml", 4, "credential_env")]


def test_claude_name_in_env_file(approot: Path) -> None:
    ddev_file(approot, ".env", "CLAUDE_CONFIG_DIR=/var/www/html/.claude\n")
    assert found(approot) == [("CLAUDE_CONFIG_DIR", ".ddev/.env", 1, "credential_env")]


def test_value_expanding_a_credential_variable(approot: Path) -> None:
    ddev_file(approot, "docker-compose.env.yaml", """\
        services:
          web:
            environment:
              - LLM_KEY=${ANTHROPIC_API_KEY}
        """)
    assert found(approot) == \
        [("ANTHROPIC_API_KEY", ".ddev/docker-compose.env.yaml", 4, "credential_env")]


def test_plain_web_environment_passes(approot: Path) -> None:
    ddev_file(approot, "config.yaml", "web_environment: [TZ=UTC, AI_PG_FIXTURE_PATH=fx]\n")
    ddev_file(approot, ".env", "DRUSH_OPTIONS_URI=https://bed.ddev.site\n")
    assert found(approot) == []


def test_env_example_is_not_read(approot: Path) -> None:
    ddev_file(approot, ".env.example", "ANTHROPIC_API_KEY=put-yours-here\n")
    assert found(approot) == []


def test_no_ddev_directory_means_no_findings(tmp_path: Path) -> None:
    assert inspect_bed(tmp_path) == []


# ---------------------------------------------------------------------------- fail closed


def test_yaml_parse_error_is_a_finding_naming_the_file(approot: Path) -> None:
    ddev_file(approot, "config.yaml", "name: bed\nweb_environment: [unclosed\n")
    assert found(approot) == [("config.yaml", ".ddev/config.yaml", 3, "unreadable")]


def test_yaml_that_is_not_a_mapping_is_a_finding(approot: Path) -> None:
    ddev_file(approot, "docker-compose.odd.yaml", "- just\n- a list\n")
    assert found(approot) == \
        [("docker-compose.odd.yaml", ".ddev/docker-compose.odd.yaml", 1, "unreadable")]


def test_undecodable_env_file_is_a_finding(approot: Path) -> None:
    (approot / ".ddev" / ".env").write_bytes(b"KEY=\xff\xfe\n")
    assert found(approot) == [(".env", ".ddev/.env", None, "unreadable")]


# ---------------------------------------------------------------------------- the verdict


def test_none_is_not_checked(approot: Path) -> None:
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    result = preflight(approot, "none", allow_override=False)
    assert (result.checked, result.refused, result.findings) == (False, False, ())


def test_bed_scoped_on_a_clean_bed_passes(approot: Path) -> None:
    result = preflight(approot, "bed-scoped", allow_override=False)
    assert (result.checked, result.refused, result.overridden) == (True, False, False)


def test_unknown_with_findings_is_refused(approot: Path) -> None:
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    result = preflight(approot, "unknown", allow_override=False)
    assert result.refused and len(result.findings) == 1


def test_host_shared_is_refused_even_on_a_clean_bed(approot: Path) -> None:
    result = preflight(approot, "host-shared", allow_override=False)
    assert result.refused and result.findings == ()
    assert "host-shared" in result.reason
    overridden = preflight(approot, "host-shared", allow_override=True)
    assert (overridden.refused, overridden.overridden) == (False, True)


# ---------------------------------------------------------------------------- apg run


def add_adapter(approot: Path, name: str, header: str, body: str = "") -> None:
    path = approot / ".ddev" / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/usr/bin/env bash\n{header}\n"
                    f"touch \"$APG_RUN_DIR/adapter-ran\"\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


def the_run(approot: Path) -> tuple[Path, dict[str, Any]]:
    [run_dir] = runs_dir(approot, Settings.from_environ()).iterdir()  # a DDEV bed's: outside it
    return run_dir, json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


def run(apg: Run, approot: Path, agent: str) -> Any:
    return apg("run", "dv01_view_build", "--approot", str(approot), "--agent", agent)


def test_refusal_lists_findings_and_runs_nothing(approot: Path, apg: Run) -> None:
    add_adapter(approot, "agent", "## Credentials: bed-scoped")
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    ddev_file(approot, ".env", f"OPENAI_API_KEY={SECRET}\n")
    rc, out, err = run(apg, approot, "agent")
    run_dir, record = the_run(approot)
    assert rc == 1 and out == ""
    assert err.startswith("APG_RUN_CRED_REFUSED adapter 'agent' (credentials: bed-scoped)")
    assert "~/.claude (home_path) in .ddev/docker-compose.claude.yaml:4" in err
    assert "OPENAI_API_KEY (credential_env) in .ddev/.env:1" in err
    assert "AI_PG_ALLOW_HOST_CREDS=1" in err
    assert not (run_dir / "work" / "adapter-ran").exists()
    assert (record["status"], record["attempted"], record["adapter_exit_code"]) == \
        ("refused", False, None)
    assert record["preflight"]["refused"] is True and record["preflight"]["overridden"] is False
    assert record["preflight"]["findings"] == [
        {"name": "OPENAI_API_KEY", "source": ".ddev/.env", "line": 1, "kind": "credential_env"},
        {"name": "~/.claude", "source": ".ddev/docker-compose.claude.yaml", "line": 4,
         "kind": "home_path"},
    ]


def test_refusal_names_an_unparsable_file(approot: Path, apg: Run) -> None:
    add_adapter(approot, "agent", "## Credentials: bed-scoped")
    ddev_file(approot, "docker-compose.broken.yaml", "services: [\n")
    rc, _, err = run(apg, approot, "agent")
    assert rc == 1
    assert "APG_RUN_CRED_REFUSED" in err
    assert "docker-compose.broken.yaml (unreadable) in .ddev/docker-compose.broken.yaml" in err


def test_override_warns_proceeds_and_records_it(approot: Path, apg: Run,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    add_adapter(approot, "agent", "## Credentials: bed-scoped")
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    monkeypatch.setenv("AI_PG_ALLOW_HOST_CREDS", "1")
    rc, _, err = run(apg, approot, "agent")
    run_dir, record = the_run(approot)
    assert rc == 0
    assert "APG_RUN_CRED_OVERRIDDEN AI_PG_ALLOW_HOST_CREDS=1" in err
    assert "~/.claude (home_path)" in err
    assert (run_dir / "work" / "adapter-ran").exists()
    assert record["preflight"]["overridden"] is True and record["preflight"]["refused"] is False
    assert [f["name"] for f in record["preflight"]["findings"]] == ["~/.claude"]


def test_override_needs_exactly_one(approot: Path, apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    add_adapter(approot, "agent", "## Credentials: bed-scoped")
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    monkeypatch.setenv("AI_PG_ALLOW_HOST_CREDS", "true")
    assert run(apg, approot, "agent").rc == 1


def test_no_credentials_adapter_is_not_preflighted(approot: Path, apg: Run) -> None:
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    rc, _, err = run(apg, approot, "nop")
    _, record = the_run(approot)
    assert rc == 0 and "APG_RUN_CRED" not in err
    assert record["preflight"]["checked"] is False


def test_unknown_credentials_are_preflighted(approot: Path, apg: Run) -> None:
    add_adapter(approot, "vague", "## Description: says nothing about credentials")
    ddev_file(approot, "docker-compose.claude.yaml", CLAUDE_ADDON)
    rc, _, err = run(apg, approot, "vague")
    _, record = the_run(approot)
    assert rc == 1 and "APG_RUN_CRED_REFUSED adapter 'vague' (credentials: unknown)" in err
    assert record["adapter"]["credentials"] == "unknown"


def test_unknown_credentials_on_a_clean_bed_run(approot: Path, apg: Run) -> None:
    add_adapter(approot, "vague", "## Credentials: maybe")
    rc, _, _ = run(apg, approot, "vague")
    _, record = the_run(approot)
    assert rc == 0
    assert record["preflight"] == {"checked": True, "credentials": "unknown", "findings": [],
                                   "refused": False, "overridden": False}


def test_host_shared_adapter_is_refused_on_a_clean_bed(approot: Path, apg: Run) -> None:
    add_adapter(approot, "mine", "## Credentials: host-shared")
    rc, _, err = run(apg, approot, "mine")
    run_dir, record = the_run(approot)
    assert rc == 1 and "APG_RUN_CRED_REFUSED adapter 'mine' (credentials: host-shared)" in err
    assert not (run_dir / "work" / "adapter-ran").exists()
    assert record["status"] == "refused"


def test_host_shared_adapter_with_override_gets_the_host_home(
        approot: Path, apg: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AI_PG_ALLOW_HOST_CREDS", "1")
    monkeypatch.setenv("HOME", str(tmp_path / "host-home"))
    add_adapter(approot, "mine", "## Credentials: host-shared",
                "printf %s \"$HOME\" > \"$APG_RUN_DIR/home-seen\"")
    rc, _, err = run(apg, approot, "mine")
    run_dir, record = the_run(approot)
    assert rc == 0 and "APG_RUN_CRED_OVERRIDDEN" in err
    assert (run_dir / "work" / "home-seen").read_text() == str(tmp_path / "host-home")
    assert record["preflight"]["overridden"] is True


def test_bed_scoped_adapter_gets_the_run_home(approot: Path, apg: Run) -> None:
    add_adapter(approot, "agent", "## Credentials: bed-scoped",
                "printf %s \"$HOME\" > \"$APG_RUN_DIR/home-seen\"")
    assert run(apg, approot, "agent").rc == 0
    run_dir, _ = the_run(approot)
    assert (run_dir / "work" / "home-seen").read_text() == str(run_dir / "home")


# ---------------------------------------------------------------------------- no secret leaks


def plant_secrets(approot: Path) -> None:
    """The same secret value in every place the preflight reads."""
    ddev_file(approot, ".env", f"ANTHROPIC_API_KEY={SECRET}\n")
    ddev_file(approot, ".env.local", f"export DB_PASSWORD=\"{SECRET}\"\n")
    ddev_file(approot, "config.yaml", f"name: bed\nweb_environment: [GH_TOKEN={SECRET}]\n")
    ddev_file(approot, "docker-compose.env.yaml", f"""\
        services:
          web:
            environment:
              - AWS_SECRET_ACCESS_KEY={SECRET}
              OPENAI_API_KEY: {SECRET}
        """)
    # Unparsable, with the secret where a parser message would quote it.
    ddev_file(approot, "config.broken.yaml", f"token: *{SECRET}\n")


def everything_written(run_dir: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for p in run_dir.rglob("*") if p.is_file())


def test_a_planted_secret_never_appears_when_refused(approot: Path, apg: Run,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("HOME", str(approot.parent))  # a DDEV project's records go under HOME
    add_adapter(approot, "agent", "## Credentials: bed-scoped")
    plant_secrets(approot)
    rc, out, err = run(apg, approot, "agent")
    run_dir, record = the_run(approot)
    assert rc == 1 and "APG_RUN_CRED_REFUSED" in err
    assert len(record["preflight"]["findings"]) >= 5
    assert "config.broken.yaml" in err
    assert SECRET not in out and SECRET not in err
    assert SECRET not in everything_written(run_dir)


def test_a_planted_secret_never_appears_when_overridden(approot: Path, apg: Run,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("HOME", str(approot.parent))  # a DDEV project's records go under HOME
    monkeypatch.setenv("AI_PG_ALLOW_HOST_CREDS", "1")
    add_adapter(approot, "agent", "## Credentials: bed-scoped",
                "env > \"$APG_RUN_DIR/adapter-env\"; env")
    plant_secrets(approot)
    rc, out, err = run(apg, approot, "agent")
    run_dir, _ = the_run(approot)
    assert rc == 0 and "APG_RUN_CRED_OVERRIDDEN" in err
    assert "APG_RUN_ID=" in (run_dir / "work" / "adapter-env").read_text()  # the dump did run
    # Neither the preflight's report nor the adapter's environment carries the host's key.
    assert SECRET not in out and SECRET not in err
    assert SECRET not in everything_written(run_dir)
