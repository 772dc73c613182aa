"""The tmux backend: each interactive role in its own session on the project's private server.

The only package that runs tmux or builds a tmux command line. Every call goes to
`tmux -L SOCKET`, so the user's own server and sessions are never touched; the one
command line for the user's own tmux (`usertmux.new_window_argv`) is run by `attach`,
on the person's request. Arguments reach tmux as an argv list, never through a shell;
the few places where tmux itself would reinterpret an argument are escaped
(`spec.py`).
"""
