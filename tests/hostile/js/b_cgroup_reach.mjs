// Hostile: what the candidate's first line can reach of the launch's cgroups. It records the
// groups it runs in, every fd it holds (and every fd of any process it can read) that names a
// cgroup file, and tries to move process 1 (bubblewrap's, outside the launch's groups) into
// them: through each such fd, through every cgroup.procs in sight opened afresh. It exports
// what it saw; the tests check it.
import fs from 'node:fs';

const moved = [];
const held = [];
const link = (path) => {
  try {
    return fs.readlinkSync(path);
  } catch {
    return '';
  }
};
for (const pid of fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p))) {
  let fds = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    continue; // another uid's (the lock-down's root writer, bubblewrap)
  }
  for (const fd of fds) {
    const to = link(`/proc/${pid}/fd/${fd}`);
    if (!to.includes('cgroup')) continue;
    held.push(`${pid}:${fd} ${to}`);
    try {
      if (pid === String(process.pid)) fs.writeSync(Number(fd), '1\n');
      else fs.writeFileSync(`/proc/${pid}/fd/${fd}`, '1\n');
      moved.push(`through ${pid}:${fd}`);
    } catch {}
  }
}
for (const controller of ['pids', 'memory', 'unified', '']) {
  const root = `/sys/fs/cgroup/${controller}`;
  let groups = [];
  try {
    groups = fs.readdirSync(root);
  } catch {
    continue;
  }
  for (const group of ['', ...groups]) {
    try {
      fs.writeFileSync(`${root}/${group}/cgroup.procs`, '1\n');
      moved.push(`into ${root}/${group}`);
    } catch {}
  }
}

export const seen = { groups: fs.readFileSync('/proc/self/cgroup', 'latin1'), held, moved };
