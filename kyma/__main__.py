from kyma.cli import main

raise SystemExit(main())
