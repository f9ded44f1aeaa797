from memchat.cli import main

raise SystemExit(main())
