"""pyop: write Kubernetes operators in Python, the kubebuilder way."""

__version__ = "0.1.0"
