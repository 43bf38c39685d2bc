"""Accounts: sign-up, logins and their lockout, password resets, hashed API tokens, and the
Instructors group.

It has no models of its own (Django's users, knox's tokens and axes' attempts hold the rows);
its one migration empties the plain-text token table of DRF's authtoken app. It imports no app
of this project but common.
"""
