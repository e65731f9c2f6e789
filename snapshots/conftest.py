# Golden bundles, not tests: keep pytest from collecting anything under snapshots/.
collect_ignore_glob = ["*"]
