"""operator-sdk's half of pyop: OLM bundles (the ClusterServiceVersion), bundle validation, scorecard.

    generate_kustomize_manifests(root) -> list[Path]     # config/manifests/bases/<project>.c...v.yaml
    generate_bundle(root, manifests_text, BundleOptions) -> list[str]   # bundle/, bundle.Dockerfile
    validate_bundle(bundle_dir, optional=None) -> Report                # `operator-sdk bundle validate`
    run_scorecard(bundle_dir, selector=None) -> list[TestStatus]        # basic and OLM suites

A layer above the generator (it reads the project's kinds and markers through `gen`) and the emulator
(scorecard creates the examples there); nothing below imports it.
"""
