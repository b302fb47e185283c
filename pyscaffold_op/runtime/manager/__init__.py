"""manager"""
