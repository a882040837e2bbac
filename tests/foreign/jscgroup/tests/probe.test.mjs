import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { seen } from '../src/reach.mjs';

const mine = fs.readFileSync('/proc/self/cgroup', 'latin1');
const launchGroups = (text) =>
  text
    .split('\n')
    .filter((line) => /\/harness-[0-9a-f]+$/.test(line))
    .map((line) => line.split(':')[1])
    .sort();

test('the test file runs inside the launch groups', () => {
  assert.deepEqual(launchGroups(mine), ['memory', 'pids']);
});

test('the candidate ran its first line inside the launch groups', () => {
  assert.deepEqual(launchGroups(seen.groups), ['memory', 'pids']);
});

test('the candidate holds no cgroup file', () => {
  assert.deepEqual(seen.held, []);
});

test('the candidate moves no process into a group', () => {
  assert.deepEqual(seen.moved, []);
});
