from fem.cli import main

raise SystemExit(main())
