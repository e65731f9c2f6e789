from specwire.runtime.owner.command import main

raise SystemExit(main())
