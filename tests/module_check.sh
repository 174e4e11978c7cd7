#!/usr/bin/env bash
# Issue 31 ask 1: env modules are found by skinner itself (skinner/module.h). From the build
# folder's program, run as `skinner` on PATH from another folder (as a user types it):
# `skinner envs` lists every module's envs; a module env trains and evaluates without
# --env-lib and is not recorded as env.plugin; SKINNER_MODULE_PATH overrides the folder (empty:
# none, so the module envs are unknown and `skinner kge` names the missing Prover module);
# a broken file in the folder is a warning naming it, and the rest still load and work.
# usage: module_check.sh BUILD_DIR
set -euo pipefail
build_dir=$(realpath "$1")
fail() { echo "module_check: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export PATH="$build_dir:$PATH"
unset SKINNER_MODULE_PATH

# found by itself, from PATH
envs=$(skinner envs 2>&1) || fail "skinner envs failed: $envs"
for id in Prover-v0 Morpho-v0 MinAtar/Breakout-v1 MinAtar/Seaquest-v0 CartPole-v1; do
    grep -q "^$id " <<< "$envs" || fail "skinner envs (run from PATH) does not list $id:
$envs"
done
[[ $envs != *warning* ]] || fail "skinner envs warned: $envs"

# a module env trains and evaluates by its id alone; its run records no env.plugin
out=$(skinner train MinAtar/Breakout-v1 --train.total_steps 2048 --run-dir run 2>&1) ||
    fail "training a module env failed: $out"
env_section=$(sed -n '/^\[env\]/,/^\[/p' run/config.ini)
grep -q '^id = MinAtar/Breakout-v1$' <<< "$env_section" || fail "config.ini's [env] has no id: $env_section"
! grep -q '^plugin' <<< "$env_section" || fail "a module env was recorded as a plugin: $env_section"
# the line training printed to evaluate it names the env by id, and runs as printed
evaluate=$(sed -n 's/^evaluate: //p' <<< "$out")
[[ $evaluate == "skinner eval MinAtar/Breakout-v1 --checkpoint run/policy.safetensors" ]] ||
    fail "training printed another evaluate line: '$evaluate'"
out=$($evaluate 2>&1) || fail "'$evaluate' failed: $out"

# SKINNER_MODULE_PATH empty: no modules; the built-ins stay
envs=$(SKINNER_MODULE_PATH= skinner envs 2>&1) || fail "skinner envs without modules failed: $envs"
grep -q '^CartPole-v1 ' <<< "$envs" || fail "no CartPole-v1 without modules: $envs"
! grep -q -e '^MinAtar/' -e '^Prover-v0 ' <<< "$envs" || fail "module envs listed without modules: $envs"
set +e
out=$(SKINNER_MODULE_PATH= skinner train MinAtar/Breakout-v1 --train.total_steps 2048 2>&1)
code=$?
[[ $code == 2 && $out == *"unknown environment 'MinAtar/Breakout-v1'"* &&
   $out == *"modules are looked for in SKINNER_MODULE_PATH=''"* ]] ||
    fail "without modules, a MinAtar env should be unknown (exit 2), naming where modules are looked for; got $code: $out"
out=$(SKINNER_MODULE_PATH= skinner kge train --dataset "$work/none" --epochs 1 --run-dir kge 2>&1)
code=$?
set -e
[[ $code != 0 && $out == *"Prover module (skinner-prover.so), which is not loaded"* ]] ||
    fail "skinner kge without the Prover module should say so, got $code: $out"

# a folder with a broken module beside a good one: a warning naming the file, the rest work
mkdir mods
cp "$build_dir/modules/skinner-minatar.so" mods/
echo "not an ELF file" > mods/skinner-broken.so
out=$(SKINNER_MODULE_PATH="$work/mods" skinner envs 2>&1) || fail "skinner envs with a broken module failed: $out"
grep -q "warning: module '$work/mods/skinner-broken.so' not loaded: .*not a loadable shared object" <<< "$out" ||
    fail "no warning naming the broken module: $out"
grep -q '^MinAtar/Breakout-v1 ' <<< "$out" || fail "the good module's envs are missing: $out"
out=$(SKINNER_MODULE_PATH="$work/mods" skinner train CartPole-v1 --train.total_steps 2048 --run-dir cp 2>&1) ||
    fail "a built-in env failed beside a broken module: $out"
echo "module_check: ok"
