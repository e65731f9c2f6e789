from runtime.owner.command import main

raise SystemExit(main())
