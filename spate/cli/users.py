"""``spate users create|delete|list``: SCRAM users, through AlterUserScramCredentials / DescribeUserScramCredentials.

``create`` adds or replaces a user's credentials for each ``--mechanism``
(default both SCRAM-SHA-256 and SCRAM-SHA-512); the password comes from
``--password``, else ``--password-file``, else a prompt, and is salted on this
side: only the salt and the salted password reach the broker. ``delete``
removes the given mechanisms (default: every one the user has). ``list``
shows users with their mechanisms and iteration counts, never secrets.
"""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    command_group,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client.admin.scram_admin import (
    DEFAULT_ITERATIONS,
    SCRAM_MECHANISMS,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

MECHANISMS = tuple(SCRAM_MECHANISMS)


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "users", "create, delete and list SCRAM users")

    create = commands.add_parser("create", help="add a user, or replace its password")
    create.add_argument("user", metavar="USER")
    secret = create.add_mutually_exclusive_group()
    secret.add_argument("--password", help="the password (visible to other local users in the process list)")
    secret.add_argument("--password-file", type=Path, metavar="FILE", help="read the password from FILE's first line")
    create.add_argument("--mechanism", action="append", choices=MECHANISMS, dest="mechanisms",
                        help="SCRAM mechanism (repeatable; default both)")
    create.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS,
                        help=f"PBKDF2 iterations, 4096..16384 (default {DEFAULT_ITERATIONS})")
    create.set_defaults(func=run_create)

    delete = commands.add_parser("delete", help="remove a user's credentials")
    delete.add_argument("user", metavar="USER")
    delete.add_argument("--mechanism", action="append", choices=MECHANISMS, dest="mechanisms",
                        help="SCRAM mechanism to remove (repeatable; default every one the user has)")
    delete.set_defaults(func=run_delete)

    listing = commands.add_parser("list", help="users with their SCRAM mechanisms and iteration counts")
    add_output_argument(listing)
    listing.set_defaults(func=run_list)

    for parser in (create, delete, listing):
        add_connection_arguments(parser)


def _password(args: argparse.Namespace) -> str:
    if args.password is not None:
        return args.password
    if args.password_file is not None:
        try:
            return args.password_file.read_text().splitlines()[0]
        except (OSError, IndexError) as exc:
            raise CliError(f"cannot read a password from {args.password_file}: {exc}") from None
    first = getpass.getpass(f"password for {args.user}: ")
    if getpass.getpass("again: ") != first:
        raise CliError("the passwords differ")
    return first


def run_create(args: argparse.Namespace) -> int:
    password = _password(args)
    if not password:
        raise CliError("the password must not be empty")
    changes = [UserScramCredentialUpsertion(args.user, mechanism, password, args.iterations)
               for mechanism in (args.mechanisms or MECHANISMS)]
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.alter_user_scram_credentials(changes)
    print(f"user {args.user}: {', '.join(c.mechanism for c in changes)} set")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        mechanisms = args.mechanisms
        if not mechanisms:
            mechanisms = [info.mechanism for info in admin.describe_user_scram_credentials([args.user])[args.user]]
        admin.alter_user_scram_credentials([UserScramCredentialDeletion(args.user, m) for m in mechanisms])
    print(f"user {args.user}: {', '.join(mechanisms)} deleted")
    return 0


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        users = admin.describe_user_scram_credentials()
    if args.output == "json":
        print_json({user: [{"mechanism": i.mechanism, "iterations": i.iterations} for i in infos]
                    for user, infos in users.items()})
        return 0
    for user, infos in users.items():
        print(f"{user}\t" + ", ".join(f"{i.mechanism} ({i.iterations} iterations)" for i in infos))
    return 0
