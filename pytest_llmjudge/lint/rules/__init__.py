"""Every lint rule, one module each, in code order."""

from __future__ import annotations

from ..rule import Rule
from .lj000_invalid_file import InvalidFile
from .lj001_split_and_logic import SplitAndLogic
from .lj002_mixed_and_or import MixedAndOr
from .lj003_implicit_and import ImplicitAnd
from .lj004_possible_split_logic import PossibleSplitLogic
from .lj010_missing_section import MissingSection
from .lj011_section_order import SectionOrder
from .lj012_empty_section import EmptySection
from .lj013_multiple_behaviors import MultipleBehaviors
from .lj014_output_schema import OutputSchema
from .lj015_unnumbered_pass_conditions import UnnumberedPassConditions
from .lj016_unplaced_text import UnplacedText
from .lj020_focus_on import FocusOn
from .lj021_note_clause import NoteClause
from .lj030_inclusion_criteria_format import InclusionCriteriaFormat
from .lj031_missing_prompt_file import MissingPromptFile
from .lj032_unused_prompt_file import UnusedPromptFile
from .lj033_shared_prompt_conflict import SharedPromptConflict
from .lj040_undefined_template_variable import UndefinedTemplateVariable
from .lj041_unused_template_variable import UnusedTemplateVariable

ALL_RULES: tuple[Rule, ...] = (
    InvalidFile(),
    SplitAndLogic(),
    MixedAndOr(),
    ImplicitAnd(),
    PossibleSplitLogic(),
    MissingSection(),
    SectionOrder(),
    EmptySection(),
    MultipleBehaviors(),
    OutputSchema(),
    UnnumberedPassConditions(),
    UnplacedText(),
    FocusOn(),
    NoteClause(),
    InclusionCriteriaFormat(),
    MissingPromptFile(),
    UnusedPromptFile(),
    SharedPromptConflict(),
    UndefinedTemplateVariable(),
    UnusedTemplateVariable(),
)
