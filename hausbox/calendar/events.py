"""The event of the calendar, with its payload."""

from typing import TypedDict

CALENDAR_PROFILE_CHANGED = "calendar.profile.changed"


class CalendarProfileChanged(TypedDict):
    profileId: str
    profileName: str


EVENTS = {CALENDAR_PROFILE_CHANGED: CalendarProfileChanged}
