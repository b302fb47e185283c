from pyscaffold_op.cli import main

main()
