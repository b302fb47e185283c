"""objects"""
