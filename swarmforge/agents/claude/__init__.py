"""claude: its command lines, hooks, state file and session transcripts."""
