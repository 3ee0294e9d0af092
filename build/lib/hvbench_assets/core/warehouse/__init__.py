from hvbench_assets.core.warehouse.store import (
    PROVENANCE_COLUMNS,
    TableSpec,
    Warehouse,
    WarehouseError,
)

__all__ = ["PROVENANCE_COLUMNS", "TableSpec", "Warehouse", "WarehouseError"]
