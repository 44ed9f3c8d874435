"""mvrewrite/match"""
