"""certs"""
