from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.roles import instructors_group_sync

DEMO_ACCOUNTS = (
    # username, password, is_instructor
    ("instructor", "instructor-demo-pass", True),
    ("student", "student-demo-pass", False),
)


class Command(BaseCommand):
    help = "Create (or reset) the demo instructor and student accounts and print their logins."

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        group = instructors_group_sync()
        for username, password, is_instructor in DEMO_ACCOUNTS:
            user, _ = User.objects.get_or_create(username=username)
            user.set_password(password)
            user.is_staff = is_instructor
            user.save()
            if is_instructor:
                user.groups.add(group)
            role = "instructor (admin at /admin/)" if is_instructor else "student"
            self.stdout.write(f"  {role:32} username: {username:12} password: {password}")
