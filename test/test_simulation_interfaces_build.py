"""
The locally built simulation_interfaces package (third_party/, scripts/build_interfaces.sh).

It is the Kilted release (1.6.1) of ros-simulation/simulation_interfaces: SpawnEntity takes
`uri` and `resource_string` (the rolling 2.x line nests them in a Resource message). The type
hashes of the types whose fields the Kilted release shares with upstream's main branch are
compared with the values in upstream's rosidl-generated code.
"""

import json
import os
import sys

from geometry_msgs.msg import PoseStamped
import pytest
from rosidl_generator_type_description import calculate_type_hash
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import (
    Bounds, EntityState, Resource, Result, SimulationState, SimulatorFeatures, SpawnResult,
    WorldResource)
from simulation_interfaces.srv import (
    DeleteEntity, GetAvailableWorlds, GetEntities, GetEntitiesStates, GetEntityState,
    GetSimulationState, GetSimulatorFeatures, LoadWorld, ResetSimulation, SetEntityState,
    SetSimulationState, SpawnEntities, SpawnEntity, StepSimulation)

# RIHS01 hashes from upstream's generated C code (rosidl_generator_c *__description.c of
# ros-simulation/simulation_interfaces main, 2.x): these types have the same fields in 1.6.1.
UPSTREAM_TYPE_HASHES = {
    'msg/Result': 'RIHS01_cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17',
    'msg/Resource': 'RIHS01_2bb1939cf80f8d2f284afba53cbec60b5ff33759bd39b714128ea8867a34c51a',
    'msg/TagsFilter': 'RIHS01_5c3efc51e8ed04c266c09cb4691ec95b964cd410558e01d8c83646b038826b45',
    'msg/WorldResource':
        'RIHS01_e3b65ecf904b9b115673e4a343c6aa3d28c19e185a71228faa64b783afcf2403',
    'srv/GetAvailableWorlds':
        'RIHS01_ce5589b5523f2732d1969a3c5a7e6b17a387091df8190c62f78d7fdd1109e3e3',
}


def installed_description(interface):
    """Return the type description JSON that rosidl installed for e.g. 'msg/Result'."""
    path = os.path.join(sys.prefix, 'share', 'simulation_interfaces', interface + '.json')
    with open(path) as f:
        return json.load(f)


def test_the_services_actions_and_messages_import_and_construct():
    for service in (SpawnEntity, GetEntities, GetEntityState, SetEntityState, DeleteEntity,
                    StepSimulation, ResetSimulation, GetSimulationState, SetSimulationState,
                    GetSimulatorFeatures, GetEntitiesStates, SpawnEntities, LoadWorld,
                    GetAvailableWorlds):
        service.Request()
        service.Response()
    SimulateSteps.Goal(steps=3)
    SimulateSteps.Feedback()
    SimulateSteps.Result()
    for message in (Result, SimulatorFeatures, EntityState, Bounds, SimulationState):
        message()


def test_result_codes():
    assert Result.RESULT_FEATURE_UNSUPPORTED == 0
    assert Result.RESULT_OK == 1
    assert Result.RESULT_NOT_FOUND == 2
    assert Result.RESULT_INCORRECT_STATE == 3
    assert Result.RESULT_OPERATION_FAILED == 4
    result = Result(result=Result.RESULT_OK, error_message='')
    assert result.result == 1


def test_simulator_features_constants():
    assert SimulatorFeatures.SPAWNING == 0
    assert SimulatorFeatures.DELETING == 1
    assert SimulatorFeatures.SPAWNING_RESOURCE_STRING == 9
    assert SimulatorFeatures.ENTITY_STATE_GETTING == 10
    assert SimulatorFeatures.ENTITY_STATE_SETTING == 11
    assert SimulatorFeatures.SIMULATION_RESET == 20
    assert SimulatorFeatures.SIMULATION_STATE_GETTING == 24
    assert SimulatorFeatures.SIMULATION_STATE_SETTING == 25
    assert SimulatorFeatures.SIMULATION_STATE_PAUSE == 26
    assert SimulatorFeatures.STEP_SIMULATION_SINGLE == 31
    assert SimulatorFeatures.STEP_SIMULATION_MULTIPLE == 32
    assert SimulatorFeatures.STEP_SIMULATION_ACTION == 33
    assert SimulatorFeatures.WORLD_LOADING == 40
    assert SimulatorFeatures.SPAWNING_ENTITIES == 50
    features = SimulatorFeatures(features=[SimulatorFeatures.SPAWNING], spawn_formats=['urdf'])
    assert list(features.features) == [0]
    assert GetSimulatorFeatures.Response().features.custom_info == ''


def test_spawn_entity_takes_uri_and_resource_string():
    request = SpawnEntity.Request(
        name='arm', allow_renaming=True, uri='file:///tmp/arm.urdf',
        resource_string='<robot name="arm"/>', entity_namespace='arm')
    assert request.uri == 'file:///tmp/arm.urdf'
    assert request.resource_string == '<robot name="arm"/>'
    assert isinstance(request.initial_pose, PoseStamped)
    assert not hasattr(request, 'entity_resource')
    response = SpawnEntity.Response()
    assert isinstance(response.result, Result)
    assert response.entity_name == ''
    assert SpawnEntity.Response.NAME_NOT_UNIQUE == 101
    assert SpawnEntity.Response.NO_RESOURCE == 104
    assert SpawnEntity.Response.INVALID_POSE == 109


def test_kilted_only_fields():
    # 1.6.1 added INVALID_POSE to SetEntityState, which has no set_pose/set_twist flags (2.x).
    assert SetEntityState.Response.INVALID_POSE == 101
    assert not hasattr(SetEntityState.Request(), 'set_pose')
    # LoadWorld keeps uri and resource_string; the batch service nests SpawnEntity messages.
    load = LoadWorld.Request(uri='file:///tmp/world.sdf')
    assert load.resource_string == ''
    assert SpawnResult.INVALID_POSE == 109
    assert isinstance(WorldResource().world_resource, Resource)
    assert SpawnEntities.Response.ENTITIES_SPAWN_FAILED == 150
    assert StepSimulation.Request().steps == 1
    assert ResetSimulation.Request.SCOPE_ALL == 255
    assert SimulationState.STATE_LOADING_WORLD == 5


@pytest.mark.parametrize('interface', sorted(UPSTREAM_TYPE_HASHES))
def test_type_hash_matches_upstream(interface):
    description = installed_description(interface)
    recorded = description['type_hashes'][0]['hash_string']
    derived = calculate_type_hash(description['type_description_msg'])
    assert derived == recorded
    assert derived == UPSTREAM_TYPE_HASHES[interface]


def test_every_interface_has_a_type_hash():
    share = os.path.join(sys.prefix, 'share', 'simulation_interfaces')
    found = {
        kind: sorted(name for name in os.listdir(os.path.join(share, kind))
                     if name.endswith('.json'))
        for kind in ('msg', 'srv', 'action')}
    assert (len(found['msg']), len(found['srv']), len(found['action'])) == (15, 22, 1)
    for kind, names in found.items():
        for name in names:
            hash_string = installed_description(kind + '/' + name[:-5])['type_hashes'][0]
            assert hash_string['hash_string'].startswith('RIHS01_')
