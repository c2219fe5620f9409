"""How usage is shown to assistants and REST clients (get_profile and /api/v1/usage)."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, Field

from usage.selectors import Usage


class UsageOut(BaseModel):
    plan: str = Field(description="The plan's slug: free, unlimited, or one an operator made.")
    plan_name: str
    unlimited: bool = Field(description="True when nothing is charged or refused.")
    month: date = Field(description="First day of the month counted, in the organisation's time zone.")
    reads: int = Field(description="Billed calls this month that ran, free or paid.")
    monthly_free_reads: int = Field(description="The plan's free reads a month.")
    free_reads_left: int | None = Field(description="Left this month; null on an unlimited plan.")
    credits: int = Field(description="Credits left in the balance.")
    credits_spent: int = Field(description="Credits spent this month.")
    renews_at: datetime = Field(description="When the free reads start again.")
    out_of_credits: bool = Field(description="True while billed calls are refused and saved knowledge waits.")

    @classmethod
    def of(cls, usage: Usage) -> UsageOut:
        return cls(
            plan=usage.plan,
            plan_name=usage.plan_name,
            unlimited=usage.unlimited,
            month=usage.month,
            reads=usage.reads,
            monthly_free_reads=usage.monthly_free_reads,
            free_reads_left=usage.free_left,
            credits=usage.credits,
            credits_spent=usage.credits_spent,
            renews_at=usage.renews_at,
            out_of_credits=usage.out_of_credits,
        )

    def to_text(self) -> str:
        if self.unlimited:
            return f"Plan {self.plan_name}: unlimited; {self.reads:,} reads this month."
        return (
            f"Plan {self.plan_name}: {self.reads:,} reads this month, {self.free_reads_left:,} of "
            f"{self.monthly_free_reads:,} free reads left, {self.credits:,} credits; renews {self.renews_at:%Y-%m-%d}."
        )
