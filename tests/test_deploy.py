"""The deployment files (issue 9): docker-compose.yml is a valid Compose file (checked by
`docker compose config` where it exists, else by the compose-spec parser: there is no Docker
engine here), every variable it reads is in .env.example, the bot's settings are the ones
`wolfjudge run` reads, health checks and the login-session volume are there, and every path
the Dockerfiles copy exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from bot.chat.live import LiveSettings
from bot.transport.channels import ENVIRONMENT, channel
from bot.web.server import WebSettings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"


def _env_example() -> dict[str, str]:
    pairs = (line.split("=", 1) for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def _docker_compose() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0


def test_compose_file_is_valid() -> None:
    if _docker_compose():
        env = {**_env_example()}
        out = subprocess.run(["docker", "compose", "-f", str(COMPOSE), "config", "-q"],
                             capture_output=True, text=True, cwd=ROOT,
                             env={**env, "PATH": "/usr/bin:/bin:/usr/local/bin"})
        assert out.returncode == 0, out.stderr
    from compose_spec import PyCompose

    compose = PyCompose.from_yaml(COMPOSE.read_text(encoding="utf-8"))
    assert sorted(compose.service_names()) == ["bot", "bot-qq", "bot-second", "bot-web",
                                               "gateway", "gateway-second", "napcat",
                                               "postgres"]


def test_every_variable_is_in_env_example() -> None:
    used = set(re.findall(r"\$\{([A-Z_]+)", COMPOSE.read_text(encoding="utf-8")))
    assert used <= set(_env_example()), used - set(_env_example())


def test_the_bot_gets_the_settings_wolfjudge_run_reads() -> None:
    spec = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    fields = [*LiveSettings.model_fields.values(), *WebSettings.model_fields.values(),
              *channel("wechat").settings.model_fields.values()]
    names = {str(f.validation_alias.choices[0]) for f in fields
             if f.validation_alias is not None} | {ENVIRONMENT}
    required = {"WECHATY_PUPPET_SERVICE_ENDPOINT", "WECHATY_PUPPET_SERVICE_TOKEN",
                "WOLFJUDGE_JUDGES", "WOLFJUDGE_DATABASE_URL", "WOLFJUDGE_GATEWAY_STATUS"}
    for bot in ("bot", "bot-second"):
        given = set(spec["services"][bot]["environment"])
        assert given <= names, given - names
        assert required <= given
        # A clean stop takes seconds; compose's default 10 s would be cut close.
        assert spec["services"][bot]["stop_grace_period"] == "30s"


def test_a_second_account_has_its_own_gateway_session_and_name() -> None:
    """Issue 21, item 8: one gateway and one bot per account, one PostgreSQL."""
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    first, second = services["bot"]["environment"], services["bot-second"]["environment"]
    assert "WOLFJUDGE_HOST" not in first  # the first account's games so far stay its own
    assert second["WOLFJUDGE_HOST"] and second["WECHATY_PUPPET_SERVICE_ENDPOINT"] == (
        "gateway-second:8788")
    assert first["WOLFJUDGE_DATABASE_URL"] == second["WOLFJUDGE_DATABASE_URL"]
    assert services["gateway-second"]["volumes"] != services["gateway"]["volumes"]
    for name in ("gateway-second", "bot-second"):
        assert services[name]["profiles"] == ["second-account"]  # not started by default


def test_the_qq_profile_runs_napcat_and_a_bot_on_the_onebot_channel() -> None:
    """Issue 32, item 6: NapCat's published image and a bot with the settings the onebot
    channel reads, both only with `--profile qq`; NapCat's login kept on volumes, its WebUI
    and its WebSocket server never published beyond the host's loopback."""
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    napcat, bot = services["napcat"], services["bot-qq"]
    assert napcat["profiles"] == bot["profiles"] == ["qq"]
    assert "napcat-docker" in napcat["image"]
    assert {v.split(":")[1] for v in napcat["volumes"]} == {"/app/.config/QQ",
                                                          "/app/napcat/config"}
    assert all(p.startswith("127.0.0.1:") for p in napcat["ports"])
    assert "3001" in napcat["expose"]
    env = bot["environment"]
    fields = [*LiveSettings.model_fields.values(), *WebSettings.model_fields.values(),
              *channel("onebot").settings.model_fields.values()]
    names = {str(f.validation_alias.choices[0]) for f in fields
             if f.validation_alias is not None} | {ENVIRONMENT}
    assert set(env) <= names, set(env) - names
    assert env[ENVIRONMENT] == "onebot" and env["WOLFJUDGE_ONEBOT_URL"] == "ws://napcat:3001"
    assert {"WOLFJUDGE_ONEBOT_TOKEN", "WOLFJUDGE_JUDGES", "WOLFJUDGE_DATABASE_URL",
            "WOLFJUDGE_HOST"} <= set(env)
    assert env["WOLFJUDGE_DATABASE_URL"] == services["bot"]["environment"][
        "WOLFJUDGE_DATABASE_URL"]
    assert not any(k.startswith("WOLFJUDGE_SEND") for k in env)  # QQ's own pacing
    assert bot["stop_grace_period"] == "30s"


def test_the_web_profile_runs_a_bot_on_the_web_channel_alone() -> None:
    """README "Playing without WeChat": `--profile web`, the bot on the web channel with the
    settings it reads, no gateway and no judges' ids (judges are granted by `judge-link`), its
    pages on the host's loopback only (a TLS proxy in front), its own name in the database."""
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    bot = services["bot-web"]
    assert bot["profiles"] == ["web"]
    assert set(bot["depends_on"]) == {"postgres"}
    env = bot["environment"]
    fields = [*LiveSettings.model_fields.values(), *WebSettings.model_fields.values(),
              *channel("web").settings.model_fields.values()]
    names = {str(f.validation_alias.choices[0]) for f in fields
             if f.validation_alias is not None} | {ENVIRONMENT}
    assert set(env) <= names, set(env) - names
    assert env[ENVIRONMENT] == "web" and "WOLFJUDGE_JUDGES" not in env
    assert {"WOLFJUDGE_WEB_URL", "WOLFJUDGE_DATABASE_URL", "WOLFJUDGE_HOST",
            "WOLFJUDGE_WEB_TRUSTED_PROXIES"} <= set(env)
    assert env["WOLFJUDGE_HOST"] != services["bot-qq"]["environment"]["WOLFJUDGE_HOST"]
    assert env["WOLFJUDGE_DATABASE_URL"] == services["bot"]["environment"][
        "WOLFJUDGE_DATABASE_URL"]
    assert all(p.startswith("127.0.0.1:") for p in bot["ports"])
    published = [p for s in services.values() for p in s.get("ports", [])]
    assert len({p.rsplit(":", 1)[0] for p in published}) == len(published)  # no port twice
    assert bot["stop_grace_period"] == "30s"


def test_the_real_puppet_is_pinned_in_one_version_everywhere() -> None:
    """gateway/package.json names the default real puppet; .env.example and the README give
    the same version (the CI test installs exactly that one)."""
    import json

    spec = json.loads((ROOT / "gateway/package.json").read_text(encoding="utf-8"))
    pin = spec["wolfjudge"]["realPuppet"]
    assert pin.startswith("wechaty-puppet-wechat4u@")
    env = _env_example()
    assert env["PUPPET_PACKAGE"] == pin and pin.startswith(env["GATEWAY_PUPPET"] + "@")
    assert f"PUPPET_PACKAGE={pin}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_health_checks_and_the_session_volume() -> None:
    spec = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = spec["services"]
    assert "healthcheck" in services["postgres"]
    for dockerfile in (ROOT / "Dockerfile", ROOT / "gateway/Dockerfile"):
        assert "HEALTHCHECK" in dockerfile.read_text(encoding="utf-8")
    assert any(v.startswith("session:") for v in services["gateway"]["volumes"])
    assert set(spec["volumes"]) >= {"pgdata", "session"}
    assert services["bot"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_the_gateway_image_has_every_module() -> None:
    copied = " ".join(line for line in (ROOT / "gateway/Dockerfile").read_text(
        encoding="utf-8").splitlines() if line.startswith("COPY "))
    for module in (ROOT / "gateway").glob("*.js"):
        assert module.name in copied, module.name


def test_dockerfiles_copy_what_exists() -> None:
    for dockerfile, context in ((ROOT / "Dockerfile", ROOT),
                                (ROOT / "gateway/Dockerfile",
                                 ROOT / "gateway")):
        for line in dockerfile.read_text(encoding="utf-8").splitlines():
            if line.startswith("COPY "):
                for src in line.split()[1:-1]:
                    assert (context / src).exists(), f"{dockerfile.name}: {src}"


def test_the_rank_minimum_is_a_setting_every_bot_gets() -> None:
    """README "Records": WOLFJUDGE_RANK_MIN_GAMES is one of the settings `wolfjudge run`
    reads, .env.example gives it, and every bot service passes it on (default 3)."""
    assert LiveSettings.model_fields["rank_min_games"].default == 3
    assert _env_example()["WOLFJUDGE_RANK_MIN_GAMES"] == "3"
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    for bot in ("bot", "bot-second", "bot-qq", "bot-web"):
        env = services[bot]["environment"]
        assert env["WOLFJUDGE_RANK_MIN_GAMES"] == "${WOLFJUDGE_RANK_MIN_GAMES:-3}", bot
