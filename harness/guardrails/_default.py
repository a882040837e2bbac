"""The shipped guardrails policy, carried in code so an installed harness has it.

tests/test_guardrails_policy.py keeps it identical to guardrails/policy.yaml.
"""

from __future__ import annotations

DEFAULT_POLICY_YAML = r"""
# Guardrails policy: the operator's hard rules. The harness enforces them on every command
# it runs, every path it writes and every candidate before it runs; the model never sees them.
#
# This is the shipped default (the harness carries the same text, so an installed harness
# works without this file). To change it, copy it and pass it with --policy. In your copy,
# every top-level section you write replaces the shipped one; sections you leave out keep
# the shipped defaults. Patterns are Python regexes (re.MULTILINE): keep them in single quotes.
version: 1

# Writes must resolve (symlinks, `..`) under one of these folders. Relative paths are relative
# to the task list's folder; the runner adds the run directory itself.
write_roots:
  - .

# Never written, even under a write root: globs on the path relative to the root.
protected_paths: [".git", ".git/*", "*/.git", "*/.git/*"]

# How to read each program's command line, so the rules below see its subcommand:
# value_options consume the next word (`git -C dir push`); skip_words may precede the
# subcommand (`gcloud beta run deploy`); long_option_abbreviations: `--forc` means `--force`.
programs:
  git:
    value_options: [-C, -c, --git-dir, --work-tree, --namespace, --exec-path, --config-env,
                    --super-prefix, -o, --push-option, --repo, --receive-pack, --exec,
                    -m, -F, --message, --file, -b, -B, --orphan]
    long_option_abbreviations: true
  gcloud:
    value_options: [--project, --account, --configuration, --billing-project, --verbosity,
                    --impersonate-service-account, --format, --flags-file, --trace-token,
                    --access-token-file]
    skip_words: [alpha, beta, preview]
  kubectl:
    value_options: [-n, --namespace, --context, --kubeconfig, --cluster, --user, -s, --server,
                    --token, --as, --as-group, --request-timeout, --certificate-authority,
                    -v, --v]
  helm:
    value_options: [-n, --namespace, --kube-context, --kubeconfig, --registry-config,
                    --repository-cache, --repository-config]
  aws:
    value_options: [--region, --profile, --output, --endpoint-url, --query, --color,
                    --ca-bundle, --cli-read-timeout, --cli-connect-timeout]
  az:
    value_options: [--subscription, --output, -o, --query]

# A command is forbidden when its program and subcommand words match `command` ("*" = any
# word, "a|b" or [a, b] = either) and then any of `flags` is given (an entry may need several
# flags: "-d|--delete -f|--force" = one of each), or a later argument fully matches one of
# `args`. With neither, the subcommand itself is forbidden. `unless_flags` makes exceptions.
forbidden_commands:
  - id: git-force-push
    command: [git, push]
    flags: ["-f|--force", "--force-with-lease", "--force-if-includes", "--mirror"]
    args: ['\+.*']
    reason: a force push rewrites the remote's history
  - id: git-push-delete
    command: [git, push]
    flags: ["-d|--delete", "--prune"]
    args: [':.*']
    reason: deleting remote branches or tags loses other people's work
  - id: git-reset-hard
    command: [git, reset]
    flags: ["--hard"]
    reason: a hard reset throws away uncommitted work
  - id: git-clean
    command: [git, clean]
    unless_flags: ["-n|--dry-run"]
    reason: git clean deletes untracked files
  - id: git-branch-force-delete
    command: [git, branch]
    flags: ["-D", "-M", "-d|--delete -f|--force"]
    reason: force-deleting or force-renaming a branch loses its unmerged commits
  - id: git-checkout-discard
    command: [git, checkout]
    flags: ["-f|--force", "--"]
    args: ['\./?', ':/.*', '\*']
    reason: checking out paths discards uncommitted changes
  - id: git-restore-worktree
    command: [git, restore]
    unless_flags: ["-S|--staged"]
    reason: git restore discards uncommitted changes
  - id: git-history-rewrite
    command: [git, "filter-branch|filter-repo"]
    reason: rewriting history is never an unattended job
  - id: git-drop-stash-or-reflog
    command: [git, "stash|reflog", "drop|clear|expire|delete"]
    reason: dropping stashes or reflog entries loses work for good
  - id: git-delete-ref
    command: [git, update-ref]
    flags: ["-d"]
    reason: deleting refs by hand loses commits
  - id: gcloud-deploy
    command: [gcloud, "*", deploy]
    reason: no deploys from an unattended run
  - id: gcloud-cloud-deploy
    command: [gcloud, deploy]
    reason: no deploys from an unattended run
  - id: gcloud-run-update
    command: [gcloud, run, "services|jobs", "update|replace|delete|update-traffic"]
    reason: changing a live Cloud Run service is a deploy
  - id: kubectl-mutate
    command:
      - kubectl
      - [apply, delete, create, replace, patch, scale, set, edit, drain, cordon, taint, run,
         expose, autoscale, label, annotate]
    reason: changing a cluster is a deploy
  - id: kubectl-rollout
    command: [kubectl, rollout, "restart|undo|pause|resume"]
    reason: changing a rollout is a deploy
  - id: helm-release
    command: [helm, "install|upgrade|uninstall|delete|rollback"]
    reason: changing a Helm release is a deploy
  - id: terraform-apply
    command: ["terraform|tofu|terragrunt", "apply|destroy|import|taint|untaint|run-all"]
    reason: changing infrastructure is never an unattended job
  - id: terraform-state
    command: ["terraform|tofu", state, "rm|mv|push|replace-provider"]
    reason: editing infrastructure state is never an unattended job
  - id: aws-deploy
    command:
      - aws
      - "*"
      - [deploy, create-deployment, update-service, update-function-code, create-stack,
         update-stack, delete-stack, execute-change-set]
    reason: no deploys from an unattended run
  - id: aws-s3-delete
    command: [aws, s3, "rm|rb"]
    reason: deleting from S3 loses data
  - id: az-deploy
    command: [az, "*", "deploy|deployment|up"]
    reason: no deploys from an unattended run
  - id: az-deployment
    command: [az, deployment]
    reason: no deploys from an unattended run
  - id: platform-deploy
    command:
      - [firebase, fly, flyctl, serverless, sls, netlify, vercel, cdk, amplify]
      - [deploy, destroy, publish]
    reason: no deploys from an unattended run
  - id: vercel-production
    command: [vercel]
    flags: ["--prod"]
    reason: no deploys from an unattended run
  - id: pulumi-up
    command: [pulumi, "up|destroy|update"]
    reason: changing infrastructure is never an unattended job

# Python calls a candidate may not make or even reference (fnmatch globs on the dotted name,
# imports resolved: `from os import killpg as k` is still os.killpg). Examples you may add:
# shutil.rmtree, socket.*, ctypes.*.
forbidden_calls:
  - id: signal-process-group
    calls: [os.killpg]
    reason: a candidate must not signal whole process groups (it would kill the test runner)
  - id: change-privileges
    calls: [os.setuid, os.setgid, os.seteuid, os.setegid, os.setreuid, os.setregid, os.chroot]
    reason: a candidate must not change its privileges

# Regexes the candidate's source must not match: a candidate that matches is never run.
# A long pattern may start with (?x) and span lines: its spaces are then ignored.
# The last two are a text fallback for commands built in ways the code analysis cannot fold:
# "git", up to 4 words, "push", up to 6 words, then a force flag (quotes, commas, brackets
# and + may separate the words).
forbidden_code_patterns:
  - id: aws-access-key
    pattern: '\b(?:AKIA|ASIA)[0-9A-Z]{16}\b'
    reason: a hardcoded AWS access key
  - id: private-key
    pattern: '-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----'
    reason: a hardcoded private key
  - id: anthropic-api-key
    pattern: '\bsk-ant-[A-Za-z0-9_-]{20,}'
    reason: a hardcoded Anthropic API key
  - id: google-api-key
    pattern: '\bAIza[0-9A-Za-z_-]{35}\b'
    reason: a hardcoded Google API key
  - id: github-token
    pattern: '\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b'
    reason: a hardcoded GitHub token
  - id: slack-token
    pattern: '\bxox[abprs]-[A-Za-z0-9-]{10,}'
    reason: a hardcoded Slack token
  - id: git-force-push-text
    pattern: '(?x) \bgit (?:[\s"'',\[\]+]+[\w./=-]+){0,4}? [\s"'',\[\]+]+ push
      (?:[\s"'',\[\]+]+[\w./:=-]+){0,6}? [\s"'',\[\]+]+ (?:-f|--force(?:-with-lease)?)(?![\w-])'
    reason: text that builds a forced git push
    ignore_comments: true
  - id: git-reset-hard-text
    pattern: '(?x) \bgit (?:[\s"'',\[\]+]+[\w./=-]+){0,4}? [\s"'',\[\]+]+ reset
      (?:[\s"'',\[\]+]+[\w./:=~^-]+){0,4}? [\s"'',\[\]+]+ --hard(?![\w-])'
    reason: text that builds a hard git reset
    ignore_comments: true

# Warnings on shipped code, reported per task in the summary; they never fail a task. Built in
# as well: hardcoded API keys, network calls without a timeout, bare `except:`.
scar_checks:
  - id: tls-verify-off
    pattern: '\bverify\s*=\s*False\b'
    message: TLS certificate checks are turned off
  - id: shell-true
    pattern: '\bshell\s*=\s*True\b'
    message: a subprocess runs through the shell
  - id: todo-left
    pattern: '#\s*(?:TODO|FIXME|XXX)\b'
    message: a TODO is left in shipped code
  - id: print-debugging
    pattern: '^\s*print\('
    message: print() in service code; use the logger
""".removeprefix("\n")
