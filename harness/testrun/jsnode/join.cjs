'use strict';
// Preloaded (`node --require`) into a sandboxed node launch whose lock-down joins the launch's
// cgroups beside node's start-up rather than before it (launch.py, `_JOIN_BESIDE`): the first
// write into a cgroup v1 cgroup.procs waits out an RCU grace period, 10-25 ms of nothing, which
// a node start (≈ 25 ms of CPU before its first preload) now hides. node runs its `--require`
// modules first, before the `--import` ones, the loader hooks and the main module: nothing
// else of the process runs until this returns, and the process has started nothing yet. It
// returns once /proc/self/cgroup lists the launch's groups; if the root writer is done and
// they are not listed, the join failed and the launch ends (126, as a failed join before).
// HARNESS_CGROUP_JOIN="<the writer's pid> <the groups' name> <how many groups>" is set for this
// process alone: it is taken out of the environment here, and this preload out of the options
// node hands on (process.execArgv: `node --test` gives them to each test file's process, fork
// to its child), so a process started later (inside the groups by inheritance) neither loads
// it nor sees it, as under plain node.
const NAME = 'HARNESS_CGROUP_JOIN';
const spec = process.env[NAME];
if (spec !== undefined) {
  delete process.env[NAME];
  const self = process.execArgv.indexOf(`--require=${__filename}`);
  if (self !== -1) process.execArgv.splice(self, 1);
  const fs = require('node:fs');
  const fail = (why) => {
    fs.writeSync(2, `sandbox: could not join the launch's cgroup: ${why}\n`);
    process.exit(126);
  };
  try {
    const [writer, group, count] = spec.split(' ');
    if (!/^[0-9]+$/.test(writer) || !group || !(Number(count) > 0)) fail('no join to wait for');
    // one open file read again from its start: a join's wait costs next to no CPU
    const fd = fs.openSync('/proc/self/cgroup', 'r');
    const buf = Buffer.alloc(16384);
    const mine = `/${group}\n`; // a line of a group the launch's, under cgroup v1 or v2
    const joined = () => {
      const text = buf.latin1Slice(0, fs.readSync(fd, buf, 0, buf.length, 0));
      let found = 0;
      for (let at = text.indexOf(mine); at !== -1; at = text.indexOf(mine, at + 1)) found += 1;
      return found >= Number(count);
    };
    const writing = () => {
      let stat;
      try {
        stat = fs.readFileSync(`/proc/${writer}/stat`, 'latin1');
      } catch {
        return false; // gone (reaped)
      }
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state !== 'Z' && state !== 'X';
    };
    const nap = new Int32Array(new SharedArrayBuffer(4));
    for (let round = 1; !joined(); round += 1) {
      // the writer's last act is the last write: once it is done, a second look is final
      if (round % 8 === 0 && !writing() && !joined()) fail(`not in the groups ${group}`);
      Atomics.wait(nap, 0, 0, 0.5);
    }
    fs.closeSync(fd);
  } catch (err) {
    fail(String(err && err.message));
  }
}
