"""Guardrails on commands: forbidden git and deploy operations, seen through their evasions."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.guardrails import GuardrailError, Policy, Violation, load_policy


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return load_policy(None, task_list_dir=tmp_path_factory.mktemp("tasks"))


def _rule(policy: Policy, cmd: str | list[str]) -> str | None:
    violation = policy.check_command(cmd)
    return violation.rule if violation else None


FORCE_PUSH = [
    "git push -f",
    "git push --force",
    "git push origin main -f",  # flag order
    "git push -u -f origin main",
    "git push -uf origin main",  # combined short flags
    "git push --force-with-lease",
    "git push --force-with-lease=main:abc123",
    "git push --forc origin",  # git accepts unambiguous abbreviations
    "git push origin +main",  # a + refspec is a force push
    "git push --mirror",
    "git    push\t  -f",  # spacing
    "'git' \"push\" '-f'",  # quoting
    "gi''t pu\"\"sh -\\f",  # quotes and escapes inside words
    "$'\\x67it' push -f",  # ANSI-C quoting
    "git push -{f,}",  # brace expansion
    "/usr/bin/git push -f",  # absolute binary path
    "GIT push -f",  # case-insensitive file systems
    "git -C /srv/repo push -f",  # global options before the subcommand
    "git -c user.name=x --no-pager push -f",
    "FOO=1 git push -f",  # env prefix
    "env X=1 Y=2 git push -f",
    "env -i PATH=/bin git push -f",
    "env -S 'git push' -f",
    "sudo git push -f",  # wrappers
    "sudo -u deploy -- git push -f",
    "nohup git push -f &",
    "timeout 30 git push -f",
    "nice -n 5 git push -f",
    "exec git push -f",
    "command git push -f",
    "time git push -f",
    "xargs git push <<< -f",
    "echo -f | xargs git push",
    "ssh build-host git push -f",
    "sh -c 'git push -f'",  # shells
    'bash -lc "git push --force origin"',
    "bash -o pipefail -c 'git push -f'",
    "zsh -c 'cd repo && git push -f'",
    "bash <<< 'git push -f'",
    "echo 'git push -f' | sh",
    "printf 'git push -f\\n' | bash",
    "cat <<EOF | sh\ngit push -f\nEOF",
    "eval 'git push -f'",
    "echo ok && git push -f",  # chains
    "true; git push -f",
    "false || git push -f",
    "git status | git push -f",
    "git status\ngit push -f",
    "(cd repo && git push -f)",
    "{ git push -f; }",
    "if true; then git push -f; fi",
    "for r in a b; do git push -f; done",
    "echo $(git push -f)",  # command substitution
    "x=`git push --force`",
    "diff <(git push -f) /dev/null",
    "$GIT push -f",  # program only known at run time
    "g=git; $g push -f",
    "git -c alias.p='push -f' p",  # git aliases
    "git config alias.yolo 'push --force'",
    "git -c alias.p='!git push -f' p",
    "python3 -c 'import os; os.system(\"git push -f\")'",  # python -c
    "python3 - <<EOF\nimport os\nos.system('git push -f')\nEOF",  # python reading stdin
    "perl -e 'system(\"git push -f\")'",  # other interpreters' string literals
    "perl -ne 'system(\"git push -f\")' list.txt",
    "node -e \"require('child_process').execSync('git push -f')\"",
    "awk 'BEGIN { system(\"git push -f\") }'",
    "find . -name .git -execdir git push -f \\;",  # find -exec
    "git submodule foreach --recursive 'git push -f'",  # git running commands itself
    "git rebase -i HEAD~3 --exec 'git push -f'",
    "git bisect run git push -f",
    "su deploy -c 'git push -f'",
    "runuser -u deploy -- git push -f",
    "git push -f 2>&1 >/dev/null",  # redirections
]


@pytest.mark.parametrize("cmd", FORCE_PUSH)
def test_force_push_is_caught_through_every_evasion(policy: Policy, cmd: str) -> None:
    """Every spelling of a force push is the git-force-push rule."""
    assert _rule(policy, cmd) == "git-force-push"


@pytest.mark.parametrize(
    ("cmd", "rule"),
    [
        ("git reset --hard", "git-reset-hard"),
        ("git reset --hard HEAD~3", "git-reset-hard"),
        ("git reset --har", "git-reset-hard"),
        ("git clean -f", "git-clean"),
        ("git clean -fd", "git-clean"),
        ("git clean -xdf", "git-clean"),
        ("git -c clean.requireForce=false clean -d", "git-clean"),
        ("git branch -D feature", "git-branch-force-delete"),
        ("git branch --delete --force feature", "git-branch-force-delete"),
        ("git branch -d -f feature", "git-branch-force-delete"),
        ("git branch -df feature", "git-branch-force-delete"),
        ("git checkout -- .", "git-checkout-discard"),
        ("git checkout .", "git-checkout-discard"),
        ("git checkout -f main", "git-checkout-discard"),
        ("git restore src/app.py", "git-restore-worktree"),
        ("git filter-branch --tree-filter x HEAD", "git-history-rewrite"),
        ("git stash clear", "git-drop-stash-or-reflog"),
        ("git push origin --delete feature", "git-push-delete"),
        ("git push origin :feature", "git-push-delete"),
    ],
)
def test_destructive_git_operations_are_forbidden(policy: Policy, cmd: str, rule: str) -> None:
    """Each destructive git operation in the shipped policy is caught by its rule."""
    assert _rule(policy, cmd) == rule


@pytest.mark.parametrize(
    ("cmd", "rule"),
    [
        ("gcloud functions deploy orders --runtime python311", "gcloud-deploy"),
        ("gcloud run deploy orders --image x", "gcloud-deploy"),
        ("gcloud app deploy", "gcloud-deploy"),
        ("gcloud beta run deploy orders", "gcloud-deploy"),
        ("gcloud --project prod functions deploy orders", "gcloud-deploy"),
        ("gcloud --project=prod run deploy orders", "gcloud-deploy"),
        ("gcloud deploy releases create r1", "gcloud-cloud-deploy"),
        ("kubectl apply -f k8s/", "kubectl-mutate"),
        ("kubectl -n prod delete pod orders-1", "kubectl-mutate"),
        ("kubectl -v 6 apply -f x.yaml", "kubectl-mutate"),
        ("kubectl --context prod apply -f x.yaml", "kubectl-mutate"),
        ("kubectl rollout restart deploy/orders", "kubectl-rollout"),
        ("terraform apply -auto-approve", "terraform-apply"),
        ("terraform -chdir=infra destroy", "terraform-apply"),
        ("tofu apply", "terraform-apply"),
        ("helm upgrade --install orders ./chart", "helm-release"),
        ("helm -n prod uninstall orders", "helm-release"),
        ("aws cloudformation deploy --template-file t.yaml", "aws-deploy"),
        ("aws --region eu-west-1 lambda update-function-code --function-name f", "aws-deploy"),
        ("aws deploy create-deployment --application-name a", "aws-deploy"),
        ("sudo -E kubectl apply -f x.yaml", "kubectl-mutate"),
        ("KUBECONFIG=/tmp/k kubectl apply -f x", "kubectl-mutate"),
        ("bash -c 'terraform apply'", "terraform-apply"),
    ],
)
def test_deploy_commands_are_forbidden(policy: Policy, cmd: str, rule: str) -> None:
    """Deploys through gcloud, kubectl, terraform, helm and aws are caught, wrapped or not."""
    assert _rule(policy, cmd) == rule


@pytest.mark.parametrize(
    "cmd",
    [
        "git push",
        "git push origin main",
        "git push -u origin feature",
        "git push --dry-run origin main",
        "git push --follow-tags",
        "git push --no-verify origin main",
        "git push -o ci.skip",
        "git push -oforce",  # -o takes a value: "force" is a push option, not --force
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1",
        "git commit -m 'push -f later'",
        "git checkout main",
        "git checkout -b feature",
        "git branch -d merged-feature",
        "git clean -n",
        "git clean -nfd",
        "git reset --soft HEAD~1",
        "git restore --staged app.py",
        "git stash list",
        "echo 'git push -f'",
        "grep -r 'kubectl apply' docs/",
        "kubectl get pods",
        "kubectl -n prod describe pod orders-1",
        "kubectl logs deploy/orders",
        "kubectl rollout status deploy/orders",
        "gcloud functions list",
        "gcloud run services describe orders",
        "terraform plan",
        "terraform validate",
        "helm list",
        "helm template ./chart",
        "aws s3 ls",
        "pytest -x tests/",
        "python -m pytest -q",
        "sh -c 'git status && git log'",
        "find . -name '*.py' -exec grep -l TODO {} +",
        "perl -ne 'print if /push -f/' log.txt",
        "git submodule update --init",
    ],
)
def test_allowed_commands_pass(policy: Policy, cmd: str) -> None:
    """Everyday read-only or safe commands are not over-matched."""
    assert _rule(policy, cmd) is None


def test_argv_lists_are_checked_without_a_shell(policy: Policy) -> None:
    """An argv list is read as-is: words are not re-split, wrappers still unwrap."""
    assert _rule(policy, ["git", "push", "origin", "main", "--force"]) == "git-force-push"
    assert _rule(policy, ["bash", "-c", "git push -f"]) == "git-force-push"
    assert _rule(policy, ["git", "commit", "-m", "git push -f"]) is None
    assert _rule(policy, []) is None


@pytest.mark.parametrize("cmd", ["$CMD", "$TOOL $VERB", "$RUNNER status", "$(which tool) -f"])
def test_unknown_program_alone_is_not_a_violation(policy: Policy, cmd: str) -> None:
    """A run-time program is only flagged when a forbidden subcommand is written out."""
    assert _rule(policy, cmd) is None


def test_violation_names_the_command_its_context_and_the_reason(policy: Policy) -> None:
    """The detail shows what would run, the line it was found in, and why it is forbidden."""
    violation = policy.check_command("cd repo && sudo git push -f origin main")

    assert violation == Violation(
        "git-force-push",
        "`git push -f origin main` (in `cd repo && sudo git push -f origin main`): "
        "a force push rewrites the remote's history",
    )
    assert str(violation).startswith("guardrail git-force-push: `git push -f")


def test_pathologically_nested_commands_are_refused(policy: Policy) -> None:
    """A command too deeply nested to check is a violation, not a pass."""
    assert _rule(policy, "sudo " * 2000 + "git status") == "command-too-complex"
    assert _rule(policy, ["nohup"] * 3000 + ["git", "status"]) == "command-too-complex"


def test_enforce_command_raises_and_logs(policy: Policy) -> None:
    """enforce_command raises GuardrailError carrying the violation and logs it."""
    with capture_logs() as logs, pytest.raises(GuardrailError) as info:
        policy.enforce_command("kubectl apply -f x.yaml")

    assert info.value.violation.rule == "kubectl-mutate"
    assert [(e["event"], e["rule"], e["check"]) for e in logs] == [
        ("guardrail_blocked", "kubectl-mutate", "command")
    ]


def test_enforce_command_is_silent_when_allowed(policy: Policy) -> None:
    """An allowed command neither raises nor logs."""
    with capture_logs() as logs:
        policy.enforce_command("git status")

    assert logs == []


def test_rules_come_from_the_policy_not_the_code(tmp_path: Path) -> None:
    """An operator's own rule forbids a command the shipped policy allows."""
    path = tmp_path / "policy.yaml"
    path.write_text(
        "forbidden_commands:\n"
        "  - id: no-docker-push\n"
        "    command: [docker, push]\n"
        "    reason: images are published by CI\n"
    )
    policy = load_policy(path, task_list_dir=tmp_path)

    assert _rule(policy, "sudo docker push registry/app:1") == "no-docker-push"
    assert _rule(policy, "git push -f") == "git-force-push"  # the shipped rules stay
