"""The words that name a relation between two people, English and Chinese, each under its
canonical name ("boss" and 上司 -> manager): extraction turns "my boss is X" into a relation
edge with them, recall follows a question's "Dave's boss" with them."""

from __future__ import annotations

# canonical relation -> the words that name it (English, Chinese)
RELATIONS: dict[str, tuple[str, ...]] = {
    "manager": ("boss", "manager", "supervisor", "line manager", "team lead", "上司", "领导", "老板", "经理", "主管"),
    "colleague": ("colleague", "coworker", "co-worker", "teammate", "同事"),
    "husband": ("husband", "丈夫", "老公", "先生"),
    "wife": ("wife", "妻子", "老婆", "太太"),
    "partner": ("partner", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "fiancée", "男朋友", "女朋友",
                "对象", "未婚夫", "未婚妻"),
    "sister": ("sister", "姐姐", "妹妹"),
    "brother": ("brother", "哥哥", "弟弟"),
    "mother": ("mother", "mom", "mum", "妈妈", "母亲"),
    "father": ("father", "dad", "爸爸", "父亲"),
    "son": ("son", "儿子"),
    "daughter": ("daughter", "女儿"),
    "child": ("child", "kid", "孩子"),
    "grandmother": ("grandmother", "grandma", "奶奶", "外婆", "姥姥"),
    "grandfather": ("grandfather", "grandpa", "爷爷", "外公", "姥爷"),
    "cousin": ("cousin", "表哥", "表姐", "表妹", "表弟", "堂哥", "堂姐", "堂妹", "堂弟"),
    "uncle": ("uncle", "叔叔", "舅舅", "伯伯"),
    "aunt": ("aunt", "阿姨", "姑姑", "舅妈", "婶婶"),
    "friend": ("friend", "best friend", "朋友", "好朋友"),
    "roommate": ("roommate", "flatmate", "housemate", "室友", "舍友"),
    "neighbour": ("neighbour", "neighbor", "邻居"),
    "teacher": ("teacher", "tutor", "mentor", "coach", "老师", "导师", "教练"),
    "student": ("student", "学生"),
}
_CANONICAL = {w: canon for canon, words in RELATIONS.items() for w in words}


def relation_of(word: str) -> str | None:
    """The canonical relation a word names ("boss" and 上司 -> manager), or None."""
    return _CANONICAL.get(word.strip().casefold())
