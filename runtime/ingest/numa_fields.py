"""The values of a Numatopology object that Volcano parses further: its CPU lists, CPU ids and
reserved quantities.  The fields' types are checked before (``kube_fields.py``); one that
Volcano could not parse (it would log and use an empty set or zero) is a K004 or K003 at its
place, so a session never runs on a topology read differently from Volcano's.
"""

from __future__ import annotations

from fumarole.runtime.api.numa import KIND, cpu_id, parse_cpu_set
from fumarole.runtime.api.quantity import QuantityError, parse_quantity
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.kube_convert import ObjectReader, mapping_field

_CPU_NUMBERS = ("numa", "socket", "core")


def check_numatopology_values(obj: dict, reader: ObjectReader) -> None:
    """A diagnostic at each CPU list, CPU id and reserved quantity of ``obj`` that does not parse."""
    spec = mapping_field(obj, "spec")
    file = reader.file
    for resource, info in (spec.get("numares") or {}).items():
        text = (info or {}).get("allocatable")
        if text is not None and parse_cpu_set(str(text)) is None:
            reader.report(kube_errors.numa_cpu_list_invalid(file, reader.at(info, "allocatable"), resource, str(text)))
    details = spec.get("cpuDetail") or {}
    for key, detail in details.items():
        if cpu_id(key) is None:
            reader.report(kube_errors.numa_cpu_id_invalid(file, reader.at_key(details, key), key))
        for field in _CPU_NUMBERS:
            number = (detail or {}).get(field)
            if isinstance(number, int) and number < 0:
                reader.report(kube_errors.numa_cpu_number_negative(file, reader.at(detail, field), key, field, number))
    reserved = spec.get("resReserved") or {}
    for name, amount in reserved.items():
        try:
            parse_quantity(amount)
        except QuantityError as exc:
            reader.report(kube_errors.bad_quantity(file, reader.at(reserved, name), f"{KIND} spec.resReserved.{name}",
                                                   exc))
