"""querylog"""
