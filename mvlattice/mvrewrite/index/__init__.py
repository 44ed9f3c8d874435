"""mvrewrite/index"""
