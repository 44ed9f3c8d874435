"""delta"""
