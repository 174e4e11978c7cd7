#!/usr/bin/env bash
# An env from outside the tree, end to end, against an installed skinner: from a
# clean prefix, the example plugin (examples/plugin) builds with the installed
# headers through pkg-config and no -lskinner (with its Makefile, and with the
# one-line skinner-plugin build the docs print; a plugin linked with -lskinner
# loads through skinner.pc's run path, or is refused saying how plugins are
# built); the installed program trains it
# to its threshold, evaluates and benches it, and resumes a run of it. The
# shared library exports only sk_* symbols, and programs linked with it run
# (one of them loading the plugin itself). Installed in the module folder, the same
# plugin is a module the program finds by itself.
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
fail() { echo "plugin_check: $*"; exit 1; }

prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build_dir" --prefix "$prefix" > /dev/null
pc_dir=$(dirname "$(find "$prefix" -name skinner.pc | head -1)")
lib_dir=$(dirname "$pc_dir")
for f in "$lib_dir/libskinner.a" "$lib_dir/libskinner.so" "$prefix/include/skinner/env.h" \
         "$prefix/include/skinner/vec.h" "$prefix/include/skinner.h" "$prefix/bin/skinner"; do
    [[ -e $f ]] || fail "$f is missing after cmake --install"
done
skinner=$prefix/bin/skinner
export PKG_CONFIG_PATH=$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

# libskinner.so exports the public API and nothing else
soname=$(readelf -d "$lib_dir/libskinner.so" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[[ $soname == libskinner.so.0 ]] || fail "libskinner.so's SONAME is '$soname', expected libskinner.so.0"
leaked=$(nm -D --defined-only "$lib_dir/libskinner.so" | awk '{print $3}' | grep -vE '^(sk_|_init$|_fini$)' || true)
[[ -z $leaked ]] || fail "libskinner.so exports non-sk_ symbols: $leaked"
# the program exports the same sk_* functions to the plugins it loads
missing=$(comm -23 <(nm -D --defined-only "$lib_dir/libskinner.so" | awk '{print $3}' | sort) \
                   <(nm -D --defined-only "$skinner" | awk '{print $3}' | sort))
[[ -z $missing ]] || fail "the skinner program does not export: $missing"

# the plugin, built like a user would: its own folder, the installed headers, no -lskinner
cp -r "$source_dir/examples/plugin" "$work/plugin"
make -s -C "$work/plugin" CFLAGS="-O2 -Wall -Wextra -Wshadow -Wconversion -Werror" > /dev/null
lib=$work/plugin/libgridworld.so
[[ -f $lib ]] || fail "make did not build libgridworld.so"
if readelf -d "$lib" | grep -q 'NEEDED.*libskinner'; then fail "the plugin links libskinner"; fi
cd "$work"

# issue 30, item 4: the one-line build docs/install.md and env.h print, through the
# skinner-plugin module (no -lskinner), trained with the installed program as printed
mkdir oneline && cp "$source_dir/examples/plugin/gridworld.c" oneline/
(cd oneline && PATH=$prefix/bin:$PATH && unset LD_LIBRARY_PATH &&
    cc -std=c17 -O2 gridworld.c -o libgridworld.so $(pkg-config --cflags --libs skinner-plugin) &&
    skinner train ./libgridworld.so:GridWorld-v0 --stop-when-solved) > oneline.out 2>&1 ||
    { cat oneline.out; fail "the documented plugin build and train failed"; }
grep "^solved GridWorld-v0" oneline.out || { cat oneline.out; fail "the one-line plugin was not solved"; }
if readelf -d oneline/libgridworld.so | grep -q 'NEEDED.*libskinner'; then
    fail "a plugin built with skinner-plugin links libskinner"
fi
# built as the issue's user did, with skinner's --libs (-lskinner): skinner.pc gives the
# library's folder as run path, so it loads without LD_LIBRARY_PATH
cc -std=c17 -O2 -shared -fPIC oneline/gridworld.c -o liblinked.so $(pkg-config --cflags --libs skinner)
# each list whole before grep -q, which stops at its match (the program's next line-buffered
# write would then die of SIGPIPE, failing the pipeline under pipefail)
listed=$(env -u LD_LIBRARY_PATH "$skinner" --env-lib ./liblinked.so envs) || true
grep -q "GridWorld-v0" <<< "$listed" ||
    fail "a plugin built with pkg-config --cflags --libs skinner does not load"
# linked with -lskinner by hand, the library off the loader's path: refused, saying how
# plugins are built
cc -std=c17 -O2 -shared -fPIC oneline/gridworld.c -o libbyhand.so -I"$prefix/include" \
    -L"$lib_dir" -lskinner
if err=$(env -u LD_LIBRARY_PATH "$skinner" --env-lib ./libbyhand.so envs 2>&1); then
    fail "a plugin that needs a libskinner.so.0 the loader cannot find was loaded"
fi
echo "$err"
grep -q "libskinner.so.0: cannot open.*pkg-config --cflags --libs skinner-plugin.*no -lskinner" <<< "$err" ||
    fail "the refusal of a -lskinner plugin does not say how plugins are built: $err"

# train to the threshold, through FILE.so:ID
"$skinner" train ./plugin/libgridworld.so:GridWorld-v0 --total-steps 200000 --env.num_envs 16 \
    --stop-when-solved --run-dir run --quiet > train.out
cat train.out
grep -q '"solved": true' run/summary.json || fail "GridWorld-v0 was not solved: $(cat run/summary.json)"
grep -q "solved GridWorld-v0" train.out || fail "train did not report solved"
grep -q "skinner eval ./plugin/libgridworld.so:GridWorld-v0 --checkpoint" train.out ||
    fail "train's evaluate hint does not name the plugin"

# evaluate the checkpoint: with --env-lib, and with FILE.so:ID
"$skinner" eval GridWorld-v0 --env-lib plugin/libgridworld.so --checkpoint run/policy.safetensors \
    --episodes 100 > eval.out
cat eval.out
grep -q "GridWorld-v0: 100 episodes" eval.out || fail "eval with --env-lib did not run 100 episodes"
grep -q "reached_goal" eval.out || fail "eval does not report the plugin's log field reached_goal"
"$skinner" eval plugin/libgridworld.so:gridworld --checkpoint run/policy.safetensors --episodes 20 \
    > /dev/null || fail "eval with FILE.so:ID failed"
# the run recorded its plugin: eval of its checkpoint needs no --env-lib
"$skinner" eval GridWorld-v0 --checkpoint run/policy.safetensors --episodes 10 > /dev/null ||
    fail "eval of a plugin run's checkpoint without --env-lib failed"
# without the plugin and without a checkpoint naming it, the error says how to give it
if err=$("$skinner" bench env GridWorld-v0 --seconds 0.1 2>&1); then
    fail "bench of a plugin env without its plugin succeeded"
fi
grep -q -- "--env-lib" <<< "$err" || fail "the unknown-env error does not mention --env-lib: $err"
# a refused plugin: exit 1 and a message naming the file
echo "not a shared object" > fake.so
if err=$("$skinner" --env-lib fake.so envs 2>&1); then fail "--env-lib fake.so was accepted"; fi
grep -q "plugin 'fake.so'.* is not a loadable shared object" <<< "$err" || fail "unexpected error: $err"

# bench and list it
"$skinner" bench env GridWorld-v0 --env-lib plugin/libgridworld.so --num-envs 256 --seconds 0.3 \
    | tee bench.out
grep -q "env steps/s" bench.out || fail "bench env did not report a rate"
listed=$("$skinner" --env-lib plugin/libgridworld.so envs) || true
grep -q "GridWorld-v0" <<< "$listed" || fail "envs does not list it"

# a short run, then --resume with more steps: its metrics continue from its last update
"$skinner" train plugin/libgridworld.so:GridWorld-v0 --total-steps 4096 --env.num_envs 16 \
    --run-dir short --quiet > /dev/null
rows_before=$(($(wc -l < short/metrics.csv) - 1))
"$skinner" --env-lib plugin/libgridworld.so train GridWorld-v0 --resume short --total-steps 12288 \
    --quiet > /dev/null
rows_after=$(($(wc -l < short/metrics.csv) - 1))
(( rows_after > rows_before )) || fail "the resumed run wrote no rows ($rows_before before, $rows_after after)"
updates=$(cut -d, -f1 short/metrics.csv | tail -n +2 | tr '\n' ' ')
[[ $updates == "$(seq -s ' ' 1 "$rows_after") " ]] ||
    fail "the resumed run's updates do not continue: $updates"
echo "resume: $rows_before updates, then $rows_after ($updates)"
# the run recorded its plugin (env.plugin, absolute): resuming needs no --env-lib
grep -q "^plugin = /.*libgridworld.so" short/config.ini || fail "config.ini does not record env.plugin"
"$skinner" train GridWorld-v0 --resume short --total-steps 16384 --quiet > /dev/null ||
    fail "resuming a plugin run without --env-lib failed"
(( $(wc -l < short/metrics.csv) - 1 > rows_after )) || fail "the second resume wrote no rows"

# programs linked with the installed libskinner.so: the header's example, and a host
# that loads the plugin itself (its sk_* calls resolve to libskinner.so)
cc -std=c17 -Wall -Wextra -Werror "$source_dir/examples/train_cartpole.c" -o train_cartpole \
    $(pkg-config --cflags --libs skinner)
readelf -d train_cartpole | grep -q 'NEEDED.*libskinner.so.0' || fail "train_cartpole did not link libskinner.so"
cat > host.c << 'EOF'
#include <skinner.h>
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argc;
    sk_config *cfg = sk_config_new();
    sk_trainer *trainer = NULL;
    if (sk_env_load_plugin(argv[1]) != SK_OK || !sk_env_find("GridWorld-v0") ||
        sk_config_set(cfg, "env.id", "GridWorld-v0") != SK_OK ||
        sk_config_set(cfg, "train.stop_when_solved", "true") != SK_OK ||
        sk_trainer_create(&trainer, cfg) != SK_OK || sk_trainer_run(trainer) != SK_OK) {
        fprintf(stderr, "error: %s\n", sk_last_error());
        return 1;
    }
    printf("solved=%d after %lld steps\n", sk_trainer_result(trainer).solved,
           (long long)sk_trainer_result(trainer).solved_at_steps);
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
    return 0;
}
EOF
cc -std=c17 -Wall -Wextra -Werror host.c -o host $(pkg-config --cflags --libs skinner)
export LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=$(./train_cartpole)
echo "train_cartpole (shared): $out"
[[ $out == solved=1* ]] || fail "train_cartpole linked with libskinner.so did not solve CartPole-v1"
out=$(./host "$lib")
echo "host (shared) + plugin: $out"
[[ $out == solved=1* ]] || fail "a program linked with libskinner.so did not solve the plugin's env"
# issue 31 ask 1: the same env as an out-of-tree module: built with skinner-plugin's flags
# into its module folder as skinner-gridworld.so, the installed program finds it by itself
# (no --env-lib, no FILE.so:ID), and a run of it records no env.plugin
moduledir=$(pkg-config --variable=moduledir skinner-plugin)
[[ $(realpath "$moduledir") == $(realpath "$lib_dir/skinner/modules") ]] ||
    fail "skinner-plugin's moduledir is '$moduledir', expected $lib_dir/skinner/modules"
cc -std=c17 -O2 oneline/gridworld.c -o "$moduledir/skinner-gridworld.so" \
    $(pkg-config --cflags --libs skinner-plugin)
envs=$(env -u LD_LIBRARY_PATH "$skinner" envs 2>&1) # read whole: grep -q would cut the pipe
grep -q "^GridWorld-v0 " <<< "$envs" || fail "the installed skinner envs does not list the module GridWorld-v0: $envs"
env -u LD_LIBRARY_PATH "$skinner" train GridWorld-v0 --total-steps 4096 --env.num_envs 16 \
    --run-dir as_module --quiet > /dev/null || fail "training the module GridWorld-v0 by id failed"
if grep -q "^plugin" as_module/config.ini; then fail "a module env was recorded as env.plugin"; fi
rm "$moduledir/skinner-gridworld.so"
echo "plugin_check: ok"
