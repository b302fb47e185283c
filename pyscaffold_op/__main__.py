from pyscaffold_op.console import main

main()
