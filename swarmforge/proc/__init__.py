"""Every child process swarmforge starts: one environment policy, decided by exit code.

Four shapes, all through here:
  `spawn.run`        run to completion with captured output (the helpers' git calls);
  `popen.start`      start and supervise: a `subprocess.Popen` to wait on, kill or read
                     (`popen.output` and `popen.run_in` are `start` run to completion);
  `detach.detach`    start in the background, in its own session, adopted by init;
  `replace.replace`  exec in place of this process, on the user's terminal.

Each applies the policy of `policy.environment`.
"""
